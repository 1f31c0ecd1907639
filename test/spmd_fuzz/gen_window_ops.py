"""Generator ops with windows and indices for the SPMD fuzz generator: gather, scatter, reduce-window,
select-and-scatter, convolution."""

import math  # noqa: F401
import random  # noqa: F401

from spmd_program import (FLOATS, MAX_ELEMENTS, MAX_MAG, MAX_RANK, Inst, Program, Skip, device_list,  # noqa: F401
                          fmt_float, is_tuple, layout, literal_text, num_elements, prime_factors,
                          random_sharding, sharding_tiling_dim, type_str)


class WindowAndIndexOps:
    """Methods of gen_spmd_module.Generator (a mixin: it uses the generator's state and helpers)."""

    def index_literal(self, shape, values):
        """An s32 literal of `shape` holding `values` in row-major order."""
        it = iter(values)

        def rec(k):
            if k == len(shape):
                return str(next(it))
            return "{ " + ", ".join(rec(k + 1) for _ in range(shape[k])) + " }"
        return rec(0) if shape else str(next(it))

    def tile_only(self, x, dim):
        """x resharded (by a copy) to a sharding that tiles dimension dim only (the rest replicated)."""
        _, dims = x.ty
        t = self.rng.choice(sorted({2, self.n}))
        tiles = [1] * len(dims)
        tiles[dim] = t
        repl = self.n // t
        sh = "{devices=[%s]%s%s}" % (",".join(map(str, tiles + ([repl] if repl > 1 else []))), device_list(self.rng, self.n),
                                    " last_tile_dim_replicate" if repl > 1 else "")
        c = self.emit("copy", x.ty, "copy", [x.name], mag=x.mag, shard=False)
        c.sharding = sh
        return c

    def op_gather(self, cur):
        """Slices of x at constant start indices (some out of range: gather clamps them), along 1 or 2 indexed
        dimensions, with 1 or 2 batch dimensions and the index vector first, last or implicit."""
        rng = self.rng
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        dtype, dims = x.ty
        r = len(dims)
        m = rng.sample(range(r), rng.choice([1, 1, 1, 2]) if r >= 2 else 1)  # start_index_map, in order
        sizes = []
        for d in range(r):
            if d in m:
                sizes.append(1 if rng.random() < 0.8 else rng.randint(1, dims[d]))
            else:
                sizes.append(dims[d] if rng.random() < 0.7 else rng.randint(1, dims[d]))
        collapsed = sorted(d for d in m if sizes[d] == 1 and rng.random() < 0.85)
        batch = [rng.randint(1, 4) for _ in range(rng.choice([1, 1, 2]))]
        where = rng.choice(["last", "last", "first"] + (["implicit"] if len(m) == 1 else []))
        if where == "last":
            ishape, ivd = batch + [len(m)], len(batch)
        elif where == "first":
            ishape, ivd = [len(m)] + batch, 0
        else:
            ishape, ivd = list(batch), len(batch)
        count = num_elements(ishape)
        # Values cycle through the index vector components (row-major with the vector last); first: same idea.
        vals = [rng.randint(-1, dims[m[k % len(m)]]) for k in range(count)]
        idx = self.emit("indices", ("s32", tuple(ishape)), "constant", attrs=self.index_literal(ishape, vals),
                        mag=float(max(dims)))
        offset_sizes = [sizes[d] for d in range(r) if d not in collapsed]
        nout = len(batch) + len(offset_sizes)
        if rng.random() < 0.5:
            offset_dims = list(range(len(batch), nout))
        else:
            offset_dims = sorted(rng.sample(range(nout), len(offset_sizes)))
        out, bi, oi = [], iter(batch), iter(offset_sizes)
        for pos in range(nout):
            out.append(next(oi) if pos in offset_dims else next(bi))
        if num_elements(out) > MAX_ELEMENTS:
            raise Skip("too large")
        if rng.random() < 0.4:
            # The vocabulary-parallel case: the operand tiled on an indexed dimension of slice size 1.
            cands = [d for d in m if sizes[d] == 1]
            if cands:
                x = self.tile_only(x, rng.choice(cands))
        attrs = (", offset_dims={%s}, collapsed_slice_dims={%s}, start_index_map={%s}, index_vector_dim=%d, "
                 "slice_sizes={%s}") % (",".join(map(str, offset_dims)), ",".join(map(str, collapsed)),
                                        ",".join(map(str, m)), ivd, ",".join(map(str, sizes)))
        g = self.emit("gather", (dtype, tuple(out)), "gather", [x.name, idx.name], attrs=attrs, mag=x.mag, shard=False)
        if rng.random() < 0.3:
            # The index-parallel case: the result tiled on a batch dimension.
            bdims = [p for p in range(nout) if p not in offset_dims]
            g.sharding = sharding_tiling_dim(rng, g.ty, rng.choice(bdims), self.n)
        else:
            self.maybe_shard(g)
        return g

    def op_scatter(self, cur):
        """Rows of updates into x at distinct constant indices along one dimension (some out of bounds: skipped),
        combined by add or by replacing."""
        rng = self.rng
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1 and v.ty[0] in ("f32", "s32"))
        dtype, dims = x.ty
        r = len(dims)
        g = rng.randrange(r)
        k = rng.randint(1, min(5, dims[g] + 2))
        vals = rng.sample(range(-1, dims[g] + 1), k)
        implicit = rng.random() < 0.3
        idx = self.emit("indices", ("s32", (k,) if implicit else (k, 1)), "constant",
                        attrs=self.index_literal([k] if implicit else [k, 1], vals), mag=float(dims[g]))
        win = [dims[d] if rng.random() < 0.7 else rng.randint(1, dims[d]) for d in range(r) if d != g]
        upd = self.value_of((dtype, tuple([k] + win)), avoid=x)
        kind = rng.choice(["add", "assign"])
        if kind == "add":
            comp = self.scalar_comp("add", dtype)
        else:
            comp = "assign_" + dtype
            if comp not in self.p.comps:
                self.p.add_comp(comp, ("%%%s (a: %s[], b: %s[]) -> %s[] {\n  %%%s.a = %s[] parameter(0)\n"
                                       "  ROOT %%%s.b = %s[] parameter(1)\n}") % (
                    comp, dtype, dtype, dtype, comp, dtype, comp, dtype))
        if rng.random() < 0.4:
            x = self.tile_only(x, g)
        attrs = (", update_window_dims={%s}, inserted_window_dims={%d}, scatter_dims_to_operand_dims={%d}, "
                 "index_vector_dim=%d, to_apply=%%%s") % (",".join(str(i + 1) for i in range(r - 1)), g, g,
                                                          1, comp)
        mag = x.mag + upd.mag if kind == "add" else max(x.mag, upd.mag)
        sc = self.emit("scatter", x.ty, "scatter", [x.name, idx.name, upd.name], attrs=attrs, mag=mag, comps=[comp],
                       shard=False)
        if rng.random() < 0.4:
            sc.sharding = sharding_tiling_dim(rng, sc.ty, g, self.n)
        else:
            self.maybe_shard(sc)
        return sc

    def op_reduce_window(self, cur):
        rng = self.rng
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        kind = rng.choice(["add", "max"])
        if kind == "add":
            x = self.to_summable(x)
        dtype, dims = x.ty
        aligned = rng.random() < 0.5  # stride 1 and size-preserving padding: the halo-exchange case
        sizes, strides, pads, out = [], [], [], []
        for d in dims:
            while True:
                w = rng.randint(1, min(3, d + 1) if not aligned else 3)
                if aligned:
                    st, lo = 1, rng.randint(0, w - 1)
                    hi = w - 1 - lo
                else:
                    st = rng.choice([1, 1, 2])
                    lo, hi = rng.choice([0, 0, 1]), rng.choice([0, 0, 1])
                if d + lo + hi >= w:
                    break
            sizes.append(w)
            strides.append(st)
            pads.append("%d_%d" % (lo, hi))
            out.append((d + lo + hi - w) // st + 1)
        window = "size=" + "x".join(map(str, sizes))
        if any(st != 1 for st in strides):
            window += " stride=" + "x".join(map(str, strides))
        if any(p != "0_0" for p in pads):
            window += " pad=" + "x".join(pads)
        init = self.reduce_init(kind, dtype)
        comp = self.scalar_comp(kind, dtype)
        mag = x.mag * num_elements(sizes) if kind == "add" else x.mag
        rw = self.emit("reduce-window", (dtype, tuple(out)), "reduce-window", [x.name, init.name],
                       attrs=", window={%s}, to_apply=%%%s" % (window, comp), mag=mag, comps=[comp], shard=False)
        if aligned and rng.random() < 0.6:
            rw.sharding = sharding_tiling_dim(rng, rw.ty, rng.randrange(len(dims)), self.n)
        else:
            self.maybe_shard(rw)
        return rw

    def op_select_and_scatter(self, cur):
        """A max-pool-gradient-like select-and-scatter: a GE/GT/LE/LT select, an add scatter; windowed dimensions
        are often tiled (the partitioner's halo case)."""
        rng = self.rng
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1 and v.ty[0] in ("f32", "s32"))
        dtype, dims = x.ty
        sizes, strides, pads, out = [], [], [], []
        for d in dims:
            while True:
                w = rng.randint(1, 3)
                st = rng.choice([1, 1, 2, 3])
                lo, hi = rng.randint(0, w - 1), rng.randint(0, w - 1)
                if d + lo + hi >= w:
                    break
            sizes.append(w)
            strides.append(st)
            pads.append("%d_%d" % (lo, hi))
            out.append((d + lo + hi - w) // st + 1)
        src = self.value_of((dtype, tuple(out)), avoid=x)
        window = "size=" + "x".join(map(str, sizes))
        if any(st != 1 for st in strides):
            window += " stride=" + "x".join(map(str, strides))
        if any(p != "0_0" for p in pads):
            window += " pad=" + "x".join(pads)
        select = self.scalar_comp(rng.choice(["ge", "gt", "le", "lt"]), dtype)
        scatter = self.scalar_comp("add", dtype)
        init = self.reduce_init("add", dtype)
        overlap = num_elements([-(-w // st) for w, st in zip(sizes, strides)])
        sas = self.emit("select-and-scatter", x.ty, "select-and-scatter", [x.name, src.name, init.name],
                        attrs=", window={%s}, select=%%%s, scatter=%%%s" % (window, select, scatter),
                        mag=src.mag * overlap, comps=[select, scatter], shard=False)
        windowed = [i for i, w in enumerate(sizes) if w > 1 or strides[i] > 1]
        if windowed and rng.random() < 0.7:
            sas.sharding = sharding_tiling_dim(rng, sas.ty, rng.choice(windowed), self.n)
        else:
            self.maybe_shard(sas)
        return sas

    def op_convolution(self, cur):
        rng = self.rng
        x = self.pick(cur, lambda v: v.ty[0] == "f32" and len(v.ty[1]) in (3, 4))
        dims = x.ty[1]
        ns = len(dims) - 2
        in_labels = ["b", "f"] + [str(i) for i in range(ns)]
        rng.shuffle(in_labels)
        pos = {l: i for i, l in enumerate(in_labels)}
        batch, feat = dims[pos["b"]], dims[pos["f"]]
        groups = rng.choice([g for g in range(2, feat + 1) if feat % g == 0] or [1]) if rng.random() < 0.2 else 1
        ofeat = groups * rng.randint(1, 4)
        wins, strides, pads, lds, rds, osz = [], [], [], [], [], []
        for i in range(ns):
            sz = dims[pos[str(i)]]
            for _ in range(20):
                w = rng.randint(1, 3)
                st = rng.choice([1, 1, 1, 2])
                ld = rng.choice([1] * 9 + [2])
                rd = rng.choice([1] * 9 + [2])
                r = rng.random()
                if r < 0.5:  # "same" padding: the partitioner's halo-exchange case when stride and dilations are 1
                    lo = rng.randint(0, w - 1)
                    hi = w - 1 - lo
                elif r < 0.7:
                    lo = hi = 0
                else:
                    lo, hi = rng.randint(-1, 2), rng.randint(-1, 2)
                size_in = (sz - 1) * ld + 1
                win = (w - 1) * rd + 1
                o = (size_in + lo + hi - win) // st + 1 if size_in + lo + hi >= win else 0
                if o >= 1:
                    break
            else:
                raise Skip("no window")
            wins.append(w)
            strides.append(st)
            pads.append("%d_%d" % (lo, hi))
            lds.append(ld)
            rds.append(rd)
            osz.append(o)
        k_labels = ["i", "o"] + [str(i) for i in range(ns)]
        rng.shuffle(k_labels)
        kdims = tuple({"i": feat // groups, "o": ofeat}.get(l) or wins[int(l)] for l in k_labels)
        o_labels = ["b", "f"] + [str(i) for i in range(ns)]
        rng.shuffle(o_labels)
        odims = tuple({"b": batch, "f": ofeat}.get(l) or osz[int(l)] for l in o_labels)
        if num_elements(odims) > MAX_ELEMENTS:
            raise Skip("too large")
        k = self.value_of(("f32", kdims))
        window = "size=" + "x".join(map(str, wins))
        if any(st != 1 for st in strides):
            window += " stride=" + "x".join(map(str, strides))
        if any(p != "0_0" for p in pads):
            window += " pad=" + "x".join(pads)
        if any(v != 1 for v in lds):
            window += " lhs_dilate=" + "x".join(map(str, lds))
        if any(v != 1 for v in rds):
            window += " rhs_dilate=" + "x".join(map(str, rds))
        attrs = ", window={%s}, dim_labels=%s_%s->%s" % (window, "".join(in_labels), "".join(k_labels),
                                                          "".join(o_labels))
        if groups > 1:
            attrs += ", feature_group_count=%d" % groups
        mag = x.mag * k.mag * num_elements(wins) * (feat // groups)
        conv = self.emit("convolution", ("f32", odims), "convolution", [x.name, k.name], attrs=attrs, mag=mag,
                         shard=False)
        r = rng.random()
        if r < 0.5:
            # Tile an output spatial dimension: with stride 1, no dilation and size-preserving padding the
            # partitioner exchanges halos between neighbouring cores.
            d = o_labels.index(str(rng.randrange(ns)))
            conv.sharding = sharding_tiling_dim(rng, conv.ty, d, self.n)
        elif r < 0.5 + self.shard_prob:
            conv.sharding = random_sharding(rng, conv.ty, self.n)
        return conv
