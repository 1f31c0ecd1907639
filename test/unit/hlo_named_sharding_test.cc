// Named (mesh) shardings: what they mean (the tiled sharding they convert to) and how malformed ones are rejected.
#include <string>

#include "frontend/hlo/printer.h"
#include "frontend/hlo/sharding_text.h"
#include "gtest/gtest.h"

namespace xlac {
namespace {

std::string Converted(const std::string& text) {
  DiagnosticEngine diags;
  std::optional<Sharding> sharding = ParseShardingText(text, diags);
  if (!sharding.has_value()) {
    SourceFile file("<sharding>", text);
    return "error: " + diags.Render(file);
  }
  return ShardingToString(*sharding);
}

TEST(NamedSharding, ConvertsToTiledShardings) {
  EXPECT_EQ(Converted("{mesh[a=2,b=4], [{a}, {b}]}"), "{devices=[2,4]0,1,2,3,4,5,6,7}");
  // Dimension 0 split by b (major) then a; c replicates.
  EXPECT_EQ(Converted("{mesh[a=2,b=2,c=2], [{b, a}, {}], replicated={c}}"),
            "{devices=[4,1,2]0,1,4,5,2,3,6,7 last_tile_dim_replicate}");
  // Axes named nowhere replicate too; `?` (open) has no meaning here.
  EXPECT_EQ(Converted("{mesh[a=2,b=4], [{a, ?}]}"), "{devices=[2,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}");
  // b:(2)2 is the minor half of b; its major half replicates.
  EXPECT_EQ(Converted("{mesh[a=2,b=4], [{b:(2)2}, {a, ?}]}"),
            "{devices=[2,2,2]0,2,4,6,1,3,5,7 last_tile_dim_replicate}");
  EXPECT_EQ(Converted("{mesh[x=2,y=4], device_ids=([4,2]T(1,0)), [{x}]}"),
            "{devices=[2,4]0,2,4,6,1,3,5,7 last_tile_dim_replicate}");
  EXPECT_EQ(Converted("{mesh[x=2,y=2], device_ids=(0,2,1,3), [{x}, {y}]}"), "{devices=[2,2]0,2,1,3}");
  EXPECT_EQ(Converted("{mesh[a=2,b=4], [{a}], manual={b}}"), "{devices=[2,4]0,1,2,3,4,5,6,7 last_tile_dims={manual}}");
  EXPECT_EQ(Converted("{mesh[a=2,b=2,c=2], [{a}], unreduced={c}}"),
            "{devices=[2,2,2]0,2,1,3,4,6,5,7 last_tile_dims={unreduced, replicated}}");
}

TEST(NamedSharding, WholeMeshForms) {
  EXPECT_EQ(Converted("{mesh[a=2,b=4], replicated}"), "{replicated}");
  EXPECT_EQ(Converted("{mesh[a=2,b=4], manual}"), "{manual}");
  EXPECT_EQ(Converted("{mesh[a=2,b=4], unreduced}"), "{unreduced}");
  EXPECT_EQ(Converted("{mesh[a=2,b=4], [{}, {}]}"), "{replicated}");
  EXPECT_EQ(Converted("{maximal_mesh[device_id=5]}"), "{maximal device=5}");
  EXPECT_EQ(Converted("{mesh[a=2,b=4], replicated, metadata={op_name=\"foo\"}}"),
            "{replicated metadata={op_name=\"foo\"}}");
  EXPECT_EQ(Converted("{{replicated}, {mesh[a=2,b=2], [{a}, {}]}, {maximal_mesh[device_id=1]}}"),
            "{{replicated}, {devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}, {maximal device=1}}");
}

TEST(NamedSharding, RejectsMalformedMeshes) {
  EXPECT_NE(Converted("{mesh[a=2,b=4], [{c}]}").find("unknown mesh axis 'c'"), std::string::npos);
  EXPECT_NE(Converted("{mesh[a=2,a=4], [{a}]}").find("mesh axis 'a' appears twice"), std::string::npos);
  EXPECT_NE(Converted("{mesh[a=2,b=4], [{a}, {a}]}").find("mesh axis 'a' is used more than once"),
            std::string::npos);
  EXPECT_NE(Converted("{mesh[a=2,b=4], [{b:(2)4}]}").find("does not fit axis 'b'"), std::string::npos);
  EXPECT_NE(Converted("{mesh[a=2,b=8], [{b:(1)4}, {b:(2)2}]}").find("mesh axis 'b' is used more than once"),
            std::string::npos);
  EXPECT_NE(Converted("{mesh[a=2,b=2], device_ids=(0,1,2), [{a}]}").find("3 device ids are listed"),
            std::string::npos);
  EXPECT_NE(Converted("{mesh[a=2,b=2], [{a}], bogus}").find("error:"), std::string::npos);
}

}  // namespace
}  // namespace xlac
