// xla-run's stderr buffer (tools/lib/run_stderr.h): a diagnostic reaches the file descriptor as whole lines.
#include "tools/lib/run_stderr.h"

#include <fcntl.h>
#include <unistd.h>

#include <ostream>
#include <string>

#include "gtest/gtest.h"

namespace xlac {
namespace {

class Pipe {
 public:
  Pipe() {
    EXPECT_EQ(::pipe(fds_), 0);
    ::fcntl(fds_[0], F_SETFL, O_NONBLOCK);
  }
  ~Pipe() {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  int write_end() const { return fds_[1]; }
  // What the pipe holds now; each read(2) result separated by '|', so the number of writes shows.
  std::string Drain() {
    std::string all;
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(fds_[0], buffer, sizeof(buffer))) > 0) all.append(buffer, static_cast<size_t>(n));
    return all;
  }

 private:
  int fds_[2];
};

TEST(RunStderr, PiecesOfALineWaitForItsEnd) {
  Pipe pipe;
  LineAtomicBuffer buffer(pipe.write_end());
  std::ostream err(&buffer);
  err << "xla-run: error: input 0 ('x.npy'): ";
  err << 'c';
  EXPECT_EQ(pipe.Drain(), "");
  err << "annot open\nsecond ";
  EXPECT_EQ(pipe.Drain(), "xla-run: error: input 0 ('x.npy'): cannot open\n");
  err << "line";
  EXPECT_EQ(pipe.Drain(), "");
  err.flush();
  EXPECT_EQ(pipe.Drain(), "second line");
}

TEST(RunStderr, LinesEndingInOnePutAreWrittenTogether) {
  Pipe pipe;
  {
    LineAtomicBuffer buffer(pipe.write_end());
    std::ostream err(&buffer);
    err << "a\nb\nc";
    EXPECT_EQ(pipe.Drain(), "a\nb\n");
    err << "\n"
        << "tail";
  }
  // The destructor writes what is left.
  EXPECT_EQ(pipe.Drain(), "c\ntail");
}

}  // namespace
}  // namespace xlac
