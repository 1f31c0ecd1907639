"""Generator ops with called computations for the SPMD fuzz generator: conditional, Sharding custom-calls, sort,
while loops and calls (bodies are random chains themselves)."""

import math  # noqa: F401
import random  # noqa: F401

from spmd_program import (FLOATS, MAX_ELEMENTS, MAX_MAG, MAX_RANK, Inst, Program, Skip, device_list,  # noqa: F401
                          fmt_float, is_tuple, layout, literal_text, num_elements, prime_factors,
                          random_sharding, sharding_tiling_dim, type_str)


class ControlFlowOps:
    """Methods of gen_spmd_module.Generator (a mixin: it uses the generator's state and helpers)."""

    def op_conditional(self, cur):
        """if max(x) > t then f(a) else g(b): the predicate is exact (a max), so both runs take the same branch."""
        rng = self.rng
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1 and v.ty[0] in ("f32", "s32"))
        dtype, dims = x.ty
        init = self.reduce_init("max", dtype)
        comp = self.scalar_comp("max", dtype)
        m = self.emit("reduce", (dtype, ()), "reduce", [x.name, init.name],
                      attrs=", dimensions={%s}, to_apply=%%%s" % (",".join(map(str, range(len(dims)))), comp),
                      mag=x.mag, comps=[comp])
        t = self.constant(dtype, rng.choice([0.0, 0.5, 0.9]) if dtype in FLOATS else rng.randint(2, 7))
        pred = self.emit("compare", ("pred", ()), "compare", [m.name, t.name], attrs=", direction=GT")
        args = [x, self.value_of(x.ty, avoid=x) if rng.random() < 0.6 else x]
        # The conditional and its branch roots share one sharding (the verifier insists), written anywhere or nowhere.
        result_sh = random_sharding(rng, x.ty, self.n) if rng.random() < self.shard_prob * 1.5 else None
        names = []
        for j, a in enumerate(args):
            name = "branch_" + self.fresh("c").replace(".", "")
            root_sh = result_sh if result_sh and rng.random() < 0.5 else None
            if self.depth < 2 and rng.random() < 0.6:
                with self.computation() as sub:
                    pa = sub.add(Inst(name + ".a", a.ty, "parameter", mag=a.mag, param_index=0))
                    if rng.random() < self.shard_prob:
                        pa.sharding = random_sharding(rng, a.ty, self.n)
                    y = self.chain_to(pa, x.ty, rng.randint(1, 4))
                    y.sharding = root_sh
                    sub.root = y.name
                    sub.prune(keep_params=True)
                    text = sub.render_computation(name)
            else:
                lines = ["%%%s (a: %s) -> %s {" % (name, type_str(a.ty, False), type_str(x.ty, False))]
                sh = (", sharding=" + random_sharding(rng, a.ty, self.n)) if rng.random() < self.shard_prob else ""
                lines.append("  %%%s.a = %s parameter(0)%s" % (name, type_str(a.ty), sh))
                y = self.body_ops(name + ".b", name + ".a", x.ty, lines, y_sharding=root_sh)
                lines[-1] = lines[-1].replace("  %" + y, "  ROOT %" + y, 1)
                lines.append("}")
                text = "\n".join(lines)
            self.p.add_comp(name, text)
            names.append(name)
        mag = 1.0 if dtype in FLOATS else max(64.0, (max(a.mag for a in args) + 1) * 2)
        c = self.emit("conditional", x.ty, "conditional", [pred.name] + [a.name for a in args],
                      attrs=", true_computation=%%%s, false_computation=%%%s" % tuple(names), mag=mag, comps=names,
                      shard=False)
        if result_sh and rng.random() < 0.6:
            c.sharding = result_sh
        return c

    def op_sharding_custom_call(self, cur):
        """XLA's sharding annotation: custom-call "Sharding" (an identity that carries a sharding)."""
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        attrs = ', custom_call_target="Sharding"'
        if self.rng.random() < 0.3:
            # Dimensions propagation may still refine (the annotation's tiles there become replication).
            r = len(x.ty[1])
            dims = sorted(self.rng.sample(range(r), self.rng.randint(1, r)))
            attrs += ', backend_config="unspecified_dims=[%s]"' % ",".join(map(str, dims))
        c = self.emit("custom-call", x.ty, "custom-call", [x.name], attrs=attrs, mag=x.mag, shard=False)
        c.sharding = random_sharding(self.rng, x.ty, self.n)
        return c

    def op_sort2(self, cur):
        """A stable key/value sort (values: an iota), both results used."""
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        dtype, dims = x.ty
        d = self.rng.randrange(len(dims))
        idx = self.emit("iota", ("s32", dims), "iota", attrs=", iota_dimension=%d" % d, mag=float(dims[d]))
        name = "cmp2_%s" % dtype
        if name not in self.p.comps:
            t = dtype + "[]"
            text = "\n".join([
                "%%%s (a: %s, b: %s, ai: s32[], bi: s32[]) -> pred[] {" % (name, t, t),
                "  %%%s.a = %s parameter(0)" % (name, t),
                "  %%%s.b = %s parameter(1)" % (name, t),
                "  %%%s.ai = s32[] parameter(2)" % name,
                "  %%%s.bi = s32[] parameter(3)" % name,
                "  ROOT %%%s.r = pred[] compare(%s %%%s.a, %s %%%s.b), direction=LT" % (name, t, name, t, name),
                "}"])
            self.p.add_comp(name, text)
        ty = ("tuple", [x.ty, ("s32", dims)])
        s = self.emit("sort", ty, "sort", [x.name, idx.name],
                      attrs=", dimensions={%d}, is_stable=true, to_apply=%%%s" % (d, name), comps=[name])
        v = self.emit("gte", x.ty, "get-tuple-element", [s.name], attrs=", index=0", mag=x.mag)
        i = self.emit("gte", ("s32", dims), "get-tuple-element", [s.name], attrs=", index=1", mag=float(dims[d]))
        self.extra_outputs.append(i)
        return v

    def op_sort(self, cur):
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        d = self.rng.randrange(len(x.ty[1]))
        comp = self.scalar_comp(self.rng.choice(["lt", "gt"]), x.ty[0])
        return self.emit("sort", x.ty, "sort", [x.name], attrs=", dimensions={%d}, to_apply=%%%s" % (d, comp),
                         mag=x.mag, comps=[comp])

    # -- called computations --
    def body_ops(self, prefix, x_name, ty, lines, y_sharding="random"):
        """Lines computing a new value of type ty from %x_name inside a called computation; returns its name.
        Floats end in tanh (bounded whatever the trip count), integers grow by at most a factor 2 + 1."""
        rng = self.rng
        dtype, dims = ty
        t = type_str(ty)
        shard = lambda: (", sharding=" + random_sharding(rng, ty, self.n)) if rng.random() < self.shard_prob else ""
        kind = rng.choice(["simple", "simple", "reduce"] if dims else ["simple"])
        cur = x_name
        if self.callees.get(ty) and rng.random() < 0.3:
            # Call an existing callee from here too: nested and shared call sites.
            callee = rng.choice(self.callees[ty])
            lines.append("  %%%s.call = %s call(%s %%%s), to_apply=%%%s%s" % (prefix, t, t, cur, callee, shard()))
            cur = prefix + ".call"
        if kind == "reduce":
            d = rng.randrange(len(dims))
            rty = (dtype, tuple(k for i, k in enumerate(dims) if i != d))
            red = "max" if dtype == "bf16" or rng.random() < 0.5 else "add"
            comp = self.scalar_comp(red, dtype)
            init = "0" if red == "add" else ("-inf" if dtype in FLOATS else "-2147483648")
            lines.append("  %%%s.init = %s[] constant(%s)" % (prefix, dtype, init))
            lines.append("  %%%s.red = %s reduce(%s %%%s, %s[] %%%s.init), dimensions={%d}, to_apply=%%%s%s" % (
                prefix, type_str(rty), t, cur, dtype, prefix, d, comp,
                (", sharding=" + random_sharding(rng, rty, self.n)) if rng.random() < self.shard_prob else ""))
            bdims = ",".join(str(i) for i in range(len(dims)) if i != d)
            lines.append("  %%%s.bc = %s broadcast(%s %%%s.red), dimensions={%s}%s" % (
                prefix, t, type_str(rty), prefix, bdims, shard()))
            if dtype in FLOATS and red == "add":
                # Keep the sum's share small: tanh(x + tanh(sum)).
                lines.append("  %%%s.bct = %s tanh(%s %%%s.bc)" % (prefix, t, t, prefix))
                lines.append("  %%%s.sum = %s add(%s %%%s, %s %%%s.bct)%s" % (prefix, t, t, cur, t, prefix, shard()))
            elif dtype in FLOATS:
                lines.append("  %%%s.sum = %s subtract(%s %%%s, %s %%%s.bc)%s" % (prefix, t, t, cur, t, prefix, shard()))
            else:
                lines.append("  %%%s.sum = %s maximum(%s %%%s, %s %%%s.bc)%s" % (prefix, t, t, cur, t, prefix, shard()))
            cur = prefix + ".sum"
        y_shard = shard() if y_sharding == "random" else (", sharding=" + y_sharding if y_sharding else "")
        if dtype in FLOATS:
            lines.append("  %%%s.y = %s tanh(%s %%%s)%s" % (prefix, t, t, cur, y_shard))
        else:
            lines.append("  %%%s.one = %s[] constant(1)" % (prefix, dtype))
            lines.append("  %%%s.ones = %s broadcast(%s[] %%%s.one), dimensions={}" % (prefix, t, dtype, prefix))
            lines.append("  %%%s.y = %s add(%s %%%s, %s %%%s.ones)%s" % (prefix, t, t, cur, t, prefix, y_shard))
        return prefix + ".y"

    def op_while(self, cur):
        rng = self.rng
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        carried = [x]
        if rng.random() < 0.3:
            carried.append(self.pick(None))
        elems = [("s32", ())] + [c.ty for c in carried]
        sty = ("tuple", elems)
        ts = type_str(sty)
        k = self.fresh("w").replace(".", "")
        cond, body = "cond_" + k, "body_" + k
        trip = rng.randint(1, 4)
        # One sharding for the whole loop state, written on any subset of the places that share it.
        state_sh = random_sharding(rng, sty, self.n) if rng.random() < 0.8 else None
        on = lambda p: (", sharding=" + state_sh) if state_sh and rng.random() < p else ""
        cond_lines = [
            "%%%s (s: %s) -> pred[] {" % (cond, type_str(sty, False)),
            "  %%%s.s = %s parameter(0)%s" % (cond, ts, on(0.3)),
            "  %%%s.i = s32[] get-tuple-element(%s %%%s.s), index=0" % (cond, ts, cond),
            "  %%%s.n = s32[] constant(%d)" % (cond, trip)]
        x0 = carried[0]
        if x0.ty[0] in ("f32", "s32") and rng.random() < 0.4:
            # Also stop once max(x) reaches a threshold (a max is exact, so both runs agree on the trip count).
            dt = x0.ty[0]
            mc = self.scalar_comp("max", dt)
            xt = type_str(x0.ty)
            thr = fmt_float(rng.choice([0.5, 0.8, 0.95])) if dt == "f32" else str(rng.randint(3, 12))
            cond_lines += [
                "  %%%s.x = %s get-tuple-element(%s %%%s.s), index=1" % (cond, xt, ts, cond),
                "  %%%s.ninf = %s[] constant(%s)" % (cond, dt, "-inf" if dt == "f32" else "-2147483648"),
                "  %%%s.m = %s[] reduce(%s %%%s.x, %s[] %%%s.ninf), dimensions={%s}, to_apply=%%%s" % (
                    cond, dt, xt, cond, dt, cond, ",".join(map(str, range(len(x0.ty[1])))), mc),
                "  %%%s.t = %s[] constant(%s)" % (cond, dt, thr),
                "  %%%s.small = pred[] compare(%s[] %%%s.m, %s[] %%%s.t), direction=LT" % (cond, dt, cond, dt, cond),
                "  %%%s.lt = pred[] compare(s32[] %%%s.i, s32[] %%%s.n), direction=LT" % (cond, cond, cond),
                "  ROOT %%%s.go = pred[] and(pred[] %%%s.lt, pred[] %%%s.small)" % (cond, cond, cond)]
        else:
            cond_lines.append(
                "  ROOT %%%s.lt = pred[] compare(s32[] %%%s.i, s32[] %%%s.n), direction=LT" % (cond, cond, cond))
        cond_lines.append("}")
        cond_text = "\n".join(cond_lines)
        if self.depth < 2 and rng.random() < 0.6:
            # A random chain in the body (nested loops, calls and conditionals included).
            mags = [1.0] + [self.bounded_mag(c.ty, c.mag) for c in carried]
            with self.computation() as sub:
                sp = sub.add(Inst(body + ".s", sty, "parameter", param_index=0))
                if state_sh and rng.random() < 0.4:
                    sp.sharding = state_sh
                i = self.emit("i", ("s32", ()), "get-tuple-element", [sp.name], attrs=", index=0", shard=False)
                one = self.constant("s32", 1)
                outs = [self.emit("i1", ("s32", ()), "add", [i.name, one.name], shard=False)]
                xs = [self.emit("x", c.ty, "get-tuple-element", [sp.name], attrs=", index=%d" % (j + 1), mag=mags[j + 1])
                      for j, c in enumerate(carried)]
                for j, xj in enumerate(xs):
                    outs.append(self.chain_to(xj, xj.ty, rng.randint(1, 4)) if j == 0 or rng.random() < 0.5 else xj)
                t = sub.add(Inst(self.fresh(body + ".t"), sty, "tuple", [o.name for o in outs]))
                if state_sh and rng.random() < 0.4:
                    t.sharding = state_sh
                sub.root = t.name
                sub.prune(keep_params=True)
                body_text = sub.render_computation(body)
        else:
            lines = ["%%%s (s: %s) -> %s {" % (body, type_str(sty, False), type_str(sty, False)),
                     "  %%%s.s = %s parameter(0)%s" % (body, ts, on(0.4)),
                     "  %%%s.i = s32[] get-tuple-element(%s %%%s.s), index=0" % (body, ts, body),
                     "  %%%s.one = s32[] constant(1)" % body,
                     "  %%%s.i1 = s32[] add(s32[] %%%s.i, s32[] %%%s.one)" % (body, body, body)]
            outs = ["s32[] %%%s.i1" % body]
            mags = [1.0]
            for j, c in enumerate(carried):
                lines.append("  %%%s.x%d = %s get-tuple-element(%s %%%s.s), index=%d" % (
                    body, j, type_str(c.ty), ts, body, j + 1))
                if j == 0 or rng.random() < 0.5:
                    y = self.body_ops("%s.b%d" % (body, j), "%s.x%d" % (body, j), c.ty, lines)
                    mags.append(max(c.mag, 1.0) if c.ty[0] in FLOATS else max(64.0, (c.mag + 1) * 2 ** trip))
                else:
                    y = "%s.x%d" % (body, j)
                    mags.append(c.mag)
                outs.append("%s %%%s" % (type_str(c.ty), y))
            lines.append("  ROOT %%%s.t = %s tuple(%s)%s" % (body, ts, ", ".join(outs), on(0.4)))
            lines.append("}")
            body_text = "\n".join(lines)
        self.p.add_comp(cond, cond_text)
        self.p.add_comp(body, body_text)
        zero = self.constant("s32", 0)
        init = self.emit("tuple", sty, "tuple", [zero.name] + [c.name for c in carried], shard=False)
        if state_sh and rng.random() < 0.4:
            init.sharding = state_sh
        w = self.emit("while", sty, "while", [init.name], attrs=", condition=%%%s, body=%%%s" % (cond, body),
                      comps=[cond, body], shard=False)
        if state_sh and rng.random() < 0.6:
            w.sharding = state_sh
        out = self.emit("gte", carried[0].ty, "get-tuple-element", [w.name], attrs=", index=1", mag=mags[1])
        if len(carried) > 1 and rng.random() < 0.5:
            # Use the second element too, so that its path through the loop is checked.
            g2 = self.emit("gte", carried[1].ty, "get-tuple-element", [w.name], attrs=", index=2", mag=mags[2])
            self.extra_outputs.append(g2)
        return out

    def op_call(self, cur):
        rng = self.rng
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        if self.callees.get(x.ty) and rng.random() < 0.5:
            # A second call site of an existing callee (with other shardings around it).
            name = rng.choice(self.callees[x.ty])
            mag = 1.0 if x.ty[0] in FLOATS else max(64.0, (x.mag + 1) * 2)
            return self.emit("call", x.ty, "call", [x.name], attrs=", to_apply=%" + name, mag=mag, comps=[name])
        args = [x]
        if rng.random() < 0.4:
            args.append(self.value_of(x.ty, avoid=x))
        k = self.fresh("f").replace(".", "")
        name = "callee_" + k
        if self.depth < 2 and rng.random() < 0.6:
            with self.computation() as sub:
                ps = []
                for j, a in enumerate(args):
                    pa = sub.add(Inst("%s.a%d" % (name, j), a.ty, "parameter", mag=a.mag, param_index=j))
                    if rng.random() < self.shard_prob:
                        pa.sharding = random_sharding(rng, a.ty, self.n)
                    ps.append(pa)
                src = ps[0]
                if len(ps) > 1:
                    op = rng.choice(["add", "maximum", "subtract"])
                    src = self.emit(op, x.ty, op, [ps[0].name, ps[1].name], mag=ps[0].mag + ps[1].mag)
                y = self.chain_to(src, x.ty, rng.randint(1, 5))
                sub.root = y.name
                sub.prune(keep_params=True)
                text = sub.render_computation(name)
        else:
            t = type_str(x.ty)
            sig = ", ".join("a%d: %s" % (j, type_str(a.ty, False)) for j, a in enumerate(args))
            lines = ["%%%s (%s) -> %s {" % (name, sig, type_str(x.ty, False))]
            for j, a in enumerate(args):
                sh = (", sharding=" + random_sharding(rng, a.ty, self.n)) if rng.random() < self.shard_prob else ""
                lines.append("  %%%s.a%d = %s parameter(%d)%s" % (name, j, t, j, sh))
            src = "%s.a0" % name
            if len(args) > 1:
                op = rng.choice(["add", "maximum", "subtract"])
                lines.append("  %%%s.m = %s %s(%s %%%s.a0, %s %%%s.a1)" % (name, t, op, t, name, t, name))
                src = name + ".m"
            y = self.body_ops(name + ".b", src, x.ty, lines)
            lines[-1] = lines[-1].replace("  %" + y, "  ROOT %" + y, 1)
            lines.append("}")
            text = "\n".join(lines)
        self.p.add_comp(name, text)
        if len(args) == 1:
            self.callees.setdefault(x.ty, []).append(name)
        mag = 1.0 if x.ty[0] in FLOATS else max(64.0, (sum(a.mag for a in args) + 1) * 2)
        return self.emit("call", x.ty, "call", [a.name for a in args], attrs=", to_apply=%" + name, mag=mag,
                         comps=[name])

    OPS = [("unary", 10), ("binary", 14), ("select", 5), ("broadcast", 6), ("transpose", 6), ("reshape", 6),
           ("reduce", 8), ("dot", 8), ("slice", 6), ("concatenate", 5), ("pad", 5), ("reverse", 4),
           ("iota_or_constant", 4), ("dynamic_slice", 4), ("convert", 4), ("sort", 3), ("while", 3), ("call", 3),
           ("clamp", 2), ("dynamic_update_slice", 3), ("gather", 3), ("scatter", 2), ("reduce_window", 3),
           ("convolution", 4),
           ("conditional", 2), ("sharding_custom_call", 2), ("sort2", 1), ("argmax", 1), ("select_and_scatter", 2)]

    # -- chains and nested computations --
