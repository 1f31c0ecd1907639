#!/usr/bin/env python3
"""Random small sharded HLO modules for differential testing of the SPMD partitioner (stdlib only).

`generate(seed)` returns a `Program`: 1-3 entry parameters (mostly f32, sometimes s32 or bf16, rank 1-3, dims
1..12 so that many shards are uneven), then a chain of 3-12 ops drawn from elementwise unary/binary ops,
compare+select, broadcast, transpose, reshape, reduce, dot, slice, concatenate, pad, reverse, iota, constant,
dynamic-slice (constant indices, sometimes out of range so they clamp), convert, sort, while loops with a counter
and calls. A random subset of instructions (parameters, chain ops, the root, loop states, instructions inside called
computations) carries a random sharding over num_partitions in {2, 4, 8}: replicated, maximal, tiled with an
explicit shuffled device list or an iota list (optionally transposed), partially replicated, or a tuple sharding.

`Program.render()` prints the module in XLA's long form. The program stays structured (instructions with named
operands) so that run_spmd_fuzz.py can shrink a failing one: drop shardings, bypass instructions, move the root.

Values carry a rough bound on their magnitude so that floating-point results stay finite and reductions stay within
the driver's tolerance; bf16 values are converted to f32 before a sum or a dot (partial sums rounded to bf16 would
legitimately differ from one sum).

CLI: gen_spmd_module.py SEED [-o FILE] prints (or writes) the module for SEED.
"""

import argparse
import contextlib
import math
import random
import re
import sys

MAX_ELEMENTS = 2048
MAX_RANK = 4
MAX_MAG = 1.0e4
FLOATS = ("f32", "bf16")


class Skip(Exception):
    """The chosen op does not fit the chosen operand; the generator tries another."""


# ---------------------------------------------------------------------------------------------------------------
# Types. An array type is (dtype, dims); a tuple type is ("tuple", [types]).

def is_tuple(ty):
    return ty[0] == "tuple"


def layout(dims):
    if not dims:
        return ""
    return "{" + ",".join(str(i) for i in reversed(range(len(dims)))) + "}"


def type_str(ty, with_layout=True):
    if is_tuple(ty):
        return "(" + ", ".join(type_str(t, with_layout) for t in ty[1]) + ")"
    dtype, dims = ty
    s = "%s[%s]" % (dtype, ",".join(str(d) for d in dims))
    return s + (layout(dims) if with_layout else "")


def num_elements(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def prime_factors(n):
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


# ---------------------------------------------------------------------------------------------------------------
# Shardings.

def device_list(rng, n, shape_dims=None):
    """An explicit shuffled device list, or XLA's iota form (`<=[n]`, `<=[a,b]T(1,0)`, ...)."""
    r = rng.random()
    if r < 0.4:
        devs = list(range(n))
        rng.shuffle(devs)
        return ",".join(str(d) for d in devs)
    if r < 0.75 or n == 2:
        return "<=[%d]" % n
    fs = prime_factors(n)
    if n == 8 and rng.random() < 0.4:
        dims = [2, 2, 2]
        perm = [0, 1, 2]
        while perm == [0, 1, 2]:
            rng.shuffle(perm)
    else:
        a = rng.choice([f for f in (2, 4) if n % f == 0 and f < n])
        dims = [a, n // a]
        perm = [1, 0]
    return "<=[%s]T(%s)" % (",".join(map(str, dims)), ",".join(map(str, perm)))


def random_sharding(rng, ty, n):
    """A sharding for a value of type ty over n devices (a string without the `sharding=` prefix)."""
    if is_tuple(ty):
        if rng.random() < 0.1:
            # One sharding for every leaf.
            return rng.choice(["{replicated}", "{maximal device=%d}" % rng.randrange(n)])
        return "{" + ", ".join(random_sharding(rng, t, n) for t in ty[1]) + "}"
    _, dims = ty
    r = rng.random()
    if not dims or r < 0.15:
        if rng.random() < 0.2:
            return "{maximal device=%d}" % rng.randrange(n)
        return "{replicated}"
    if r < 0.22:
        return "{maximal device=%d}" % rng.randrange(n)
    # Tiled, possibly partially replicated (the last tile dimension replicates).
    divs = [d for d in range(2, n) if n % d == 0]
    repl = 1
    if divs and rng.random() < 0.25:
        repl = rng.choice(divs)
    tiles = [1] * len(dims)
    for f in prime_factors(n // repl):
        # Prefer dimensions that are not size 1, but sometimes tile a dimension into more tiles than it has elements.
        cands = [i for i in range(len(dims)) if dims[i] > 1]
        if not cands or rng.random() < 0.1:
            cands = list(range(len(dims)))
        tiles[rng.choice(cands)] *= f
    tile_dims = tiles + ([repl] if repl > 1 else [])
    s = "{devices=[%s]%s" % (",".join(map(str, tile_dims)), device_list(rng, n))
    if repl > 1:
        s += rng.choice([" last_tile_dim_replicate", " last_tile_dim_replicate", " last_tile_dims={replicated}"])
    return s + "}"


def sharding_tiling_dim(rng, ty, dim, n):
    """A tiled sharding of an array type with dimension `dim` split (2 ways or n ways); the other devices tile another
    dimension or replicate."""
    _, dims = ty
    t = rng.choice(sorted({2, n}))
    tiles = [1] * len(dims)
    tiles[dim] = t
    repl = n // t
    if repl > 1 and len(dims) > 1 and rng.random() < 0.5:
        other = rng.choice([i for i in range(len(dims)) if i != dim])
        tiles[other] = repl
        repl = 1
    tile_dims = tiles + ([repl] if repl > 1 else [])
    s = "{devices=[%s]%s" % (",".join(map(str, tile_dims)), device_list(rng, n))
    return s + (" last_tile_dim_replicate}" if repl > 1 else "}")


# ---------------------------------------------------------------------------------------------------------------
# Program representation.

class Inst:
    def __init__(self, name, ty, opcode, operands=(), attrs="", mag=1.0, param_index=None, comps=()):
        self.name = name
        self.ty = ty
        self.opcode = opcode
        self.operands = list(operands)
        self.attrs = attrs  # text after the operand list, starting with ", " (or "" / "(n)" text for parameters)
        self.sharding = None
        self.mag = mag
        self.param_index = param_index
        self.comps = list(comps)  # names of called computations


class Program:
    def __init__(self, num_partitions):
        self.num_partitions = num_partitions
        self.insts = []
        self.by_name = {}
        self.root = None
        self.comps = {}  # name -> (text, [names of computations it calls])
        self.comp_order = []
        self.header_attrs = []  # e.g. "allow_spmd_sharding_propagation_to_output={true}"

    # -- construction --
    def add(self, inst):
        assert inst.name not in self.by_name, inst.name
        self.insts.append(inst)
        self.by_name[inst.name] = inst
        return inst

    def add_comp(self, name, text):
        if name not in self.comps:
            calls = re.findall(r"(?:to_apply|condition|body|true_computation|false_computation|select|scatter)=%([\w.\-]+)", text)
            self.comps[name] = (text, sorted(set(calls)))
            self.comp_order.append(name)
        return name

    def copy(self):
        p = Program(self.num_partitions)
        for i in self.insts:
            j = Inst(i.name, i.ty, i.opcode, i.operands, i.attrs, i.mag, i.param_index, i.comps)
            j.sharding = i.sharding
            p.add(j)
        p.root = self.root
        p.comps = dict(self.comps)
        p.comp_order = list(self.comp_order)
        p.header_attrs = list(self.header_attrs)
        return p

    def params(self):
        return sorted((i for i in self.insts if i.opcode == "parameter"), key=lambda i: i.param_index)

    # -- editing (used by the shrinker) --
    def users(self, name):
        return [i for i in self.insts if name in i.operands]

    def prune(self, keep_params=False):
        """Drops instructions the root does not reach and (unless keep_params) renumbers the parameters left."""
        live = set()
        stack = [self.root]
        while stack:
            n = stack.pop()
            if n in live:
                continue
            live.add(n)
            stack.extend(self.by_name[n].operands)
        self.insts = [i for i in self.insts if i.name in live or (keep_params and i.opcode == "parameter")]
        self.by_name = {i.name: i for i in self.insts}
        for k, p in enumerate(self.params()):
            p.param_index = k

    def replace_uses(self, old, new):
        for i in self.insts:
            i.operands = [new if o == old else o for o in i.operands]
        if self.root == old:
            self.root = new

    # -- printing --
    def render(self):
        out = ["HloModule m, %snum_partitions=%d" % ("".join(a + ", " for a in self.header_attrs),
                                                     self.num_partitions), ""]
        needed = set()
        stack = [c for i in self.insts for c in i.comps]
        while stack:
            c = stack.pop()
            if c not in needed:
                needed.add(c)
                stack.extend(self.comps[c][1])
        for c in self.comp_order:
            if c in needed:
                out.append(self.comps[c][0])
                out.append("")
        out.append(self.render_computation("main", entry=True))
        return "\n".join(out) + "\n"

    def render_computation(self, name, entry=False):
        params = self.params()
        root = self.by_name[self.root]
        sig = ", ".join("%s: %s" % (p.name.replace(".", "_"), type_str(p.ty, False)) for p in params)
        out = ["%s%%%s (%s) -> %s {" % ("ENTRY " if entry else "", name, sig, type_str(root.ty, False))]
        # Parameters first, the root last; everything else in creation (topological) order.
        order = params + [i for i in self.insts if i.opcode != "parameter" and i.name != self.root]
        if root.opcode != "parameter":
            order.append(root)
        for i in order:
            out.append("  " + ("ROOT " if i.name == self.root else "") + self.inst_text(i))
        out.append("}")
        return "\n".join(out)

    def inst_text(self, i):
        if i.opcode == "parameter":
            s = "%%%s = %s parameter(%d)" % (i.name, type_str(i.ty), i.param_index)
        elif i.opcode == "constant":
            s = "%%%s = %s constant(%s)" % (i.name, type_str(i.ty), i.attrs)
        else:
            ops = ", ".join("%s %%%s" % (type_str(self.by_name[o].ty), o) for o in i.operands)
            s = "%%%s = %s %s(%s)%s" % (i.name, type_str(i.ty), i.opcode, ops, i.attrs)
        if i.sharding:
            s += ", sharding=" + i.sharding
        return s


# ---------------------------------------------------------------------------------------------------------------
# Scalar formatting and literals.

def fmt_float(x):
    s = repr(float(x))
    if s in ("inf", "-inf", "nan"):
        return s
    if s.endswith(".0"):
        s = s[:-2]
    return s


def literal_text(rng, dtype, dims):
    """A literal of the given shape with small values, nested like XLA prints it."""
    def scalar():
        if dtype == "s32":
            return str(rng.randint(-4, 7))
        return fmt_float(rng.choice([-1, -0.5, -0.25, 0, 0.25, 0.5, 0.75, 1, 1.5, 2]))

    def rec(k):
        if k == len(dims):
            return scalar()
        return "{ " + ", ".join(rec(k + 1) for _ in range(dims[k])) + " }"
    if not dims:
        return scalar()
    return rec(0)


# ---------------------------------------------------------------------------------------------------------------
# The generator.

class Generator:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        rng = self.rng
        self.n = rng.choice([2, 2, 4, 4, 4, 8, 8])
        self.p = Program(self.n)
        self.counter = 0
        self.shard_prob = rng.choice([0.15, 0.3, 0.45, 0.6, 0.8])
        self.num_params = 0
        self.max_params = 3
        self.depth = 0  # nesting of the computation being built (0: entry)
        self.extra_outputs = []
        self.callees = {}  # type -> names of one-parameter callees

    # -- helpers --
    def fresh(self, base):
        self.counter += 1
        return "%s.%d" % (base, self.counter)

    def maybe_shard(self, inst, prob=None):
        if prob is None:
            prob = self.shard_prob
        if self.rng.random() < prob:
            inst.sharding = random_sharding(self.rng, inst.ty, self.n)
        return inst

    def emit(self, base, ty, opcode, operands=(), attrs="", mag=1.0, comps=(), shard=True):
        if not is_tuple(ty) and num_elements(ty[1]) > MAX_ELEMENTS:
            raise Skip("too large")
        if mag > MAX_MAG:
            raise Skip("magnitude")
        inst = self.p.add(Inst(self.fresh(base), ty, opcode, operands, attrs, mag, comps=comps))
        if shard:
            self.maybe_shard(inst)
        return inst

    def rand_dims(self, rank=None):
        if rank is None:
            rank = self.rng.choice([1, 2, 2, 2, 3, 3])
        return tuple(self.rng.choice([1, 2, 3, 4, 4, 5, 6, 6, 7, 8, 8, 9, 10, 11, 12]) for _ in range(rank))

    def rand_dtype(self):
        r = self.rng.random()
        return "f32" if r < 0.72 else ("s32" if r < 0.87 else "bf16")

    def param(self, ty, prob=0.7):
        k = self.num_params
        self.num_params += 1
        inst = self.p.add(Inst("p%d" % k, ty, "parameter", mag=1.0 if ty[0] in FLOATS else 8.0, param_index=k))
        self.maybe_shard(inst, prob)
        return inst

    def constant(self, dtype, value, shard=False):
        text = fmt_float(value) if dtype in FLOATS else str(int(value))
        # Reduction identities (-inf, INT_MIN) never end up in a result on their own.
        mag = abs(value) if abs(value) < 1e9 else 0.0
        return self.emit("c", (dtype, ()), "constant", attrs=text, mag=mag, shard=shard)

    def arrays(self, pred=lambda v: True):
        """Values the chain may use as operands (not tuples, predicates or scalar constants)."""
        return [i for i in self.p.insts if not is_tuple(i.ty) and i.ty[0] != "pred"
                and not (i.opcode == "constant" and not i.ty[1]) and pred(i)]

    def pick(self, cur, pred=lambda v: True):
        if cur is not None and self.rng.random() < 0.75 and pred(cur):
            return cur
        cands = self.arrays(pred)
        if not cands:
            raise Skip("no operand")
        return self.rng.choice(cands)

    def value_of(self, ty, avoid=None):
        """Some value of exactly type ty: an existing one, a new parameter, a reshape, an iota or a constant."""
        rng = self.rng
        dtype, dims = ty
        same = [i for i in self.arrays(lambda v: v.ty == ty) if i is not avoid]
        r = rng.random()
        if same and r < 0.4:
            return rng.choice(same)
        if self.num_params < self.max_params and r < 0.7:
            return self.param(ty)
        n = num_elements(dims)
        reshapable = self.arrays(lambda v: v.ty[0] == dtype and num_elements(v.ty[1]) == n and v.ty[1] != dims)
        if reshapable and rng.random() < 0.5:
            src = rng.choice(reshapable)
            return self.emit("reshape", ty, "reshape", [src.name], mag=src.mag)
        if dims and n <= 24 and rng.random() < 0.5:
            return self.emit("constant", ty, "constant", attrs=literal_text(rng, dtype, dims), mag=7.0)
        if dims and rng.random() < 0.6:
            d = rng.randrange(len(dims))
            return self.emit("iota", ty, "iota", attrs=", iota_dimension=%d" % d, mag=float(dims[d]))
        c = self.constant(dtype, rng.choice([0.5, 1, 2, -1]) if dtype in FLOATS else rng.randint(-3, 3))
        return self.emit("broadcast", ty, "broadcast", [c.name], attrs=", dimensions={}", mag=c.mag)

    def to_summable(self, x):
        """bf16 sums/dots would round partial sums: compute them in f32."""
        if x.ty[0] == "bf16":
            return self.emit("convert", ("f32", x.ty[1]), "convert", [x.name], mag=x.mag)
        return x

    def scalar_comp(self, kind, dtype):
        name = "%s_%s" % (kind, dtype)
        if name not in self.p.comps:
            if kind in ("add", "max", "min"):
                op = {"add": "add", "max": "maximum", "min": "minimum"}[kind]
                text = ("%%%s (a: %s[], b: %s[]) -> %s[] {\n"
                        "  %%%s.a = %s[] parameter(0)\n"
                        "  %%%s.b = %s[] parameter(1)\n"
                        "  ROOT %%%s.r = %s[] %s(%s[] %%%s.a, %s[] %%%s.b)\n}") % (
                    name, dtype, dtype, dtype, name, dtype, name, dtype, name, dtype, op, dtype, name, dtype, name)
            else:  # comparator: lt / gt / le / ge
                d = kind.upper()
                text = ("%%%s (a: %s[], b: %s[]) -> pred[] {\n"
                        "  %%%s.a = %s[] parameter(0)\n"
                        "  %%%s.b = %s[] parameter(1)\n"
                        "  ROOT %%%s.r = pred[] compare(%s[] %%%s.a, %s[] %%%s.b), direction=%s\n}") % (
                    name, dtype, dtype, name, dtype, name, dtype, name, dtype, name, dtype, name, d)
            self.p.add_comp(name, text)
        return name

    # -- ops --
    def op_unary(self, cur):
        x = self.pick(cur)
        choices = ["negate", "copy"]
        if x.ty[0] in FLOATS:
            choices += ["tanh", "tanh"] + (["exponential", "exponential"] if x.mag <= 4 else [])
        op = self.rng.choice(choices)
        mag = 1.0 if op == "tanh" else (math.exp(x.mag) if op == "exponential" else x.mag)
        if op == "copy" and x.ty[1] and self.rng.random() < 0.5:
            # A copy that only reshards: the sharding is the point.
            c = self.emit("copy", x.ty, "copy", [x.name], mag=mag, shard=False)
            c.sharding = random_sharding(self.rng, x.ty, self.n)
            return c
        return self.emit(op, x.ty, op, [x.name], mag=mag)

    def op_binary(self, cur):
        x = self.pick(cur)
        y = self.value_of(x.ty, avoid=x) if self.rng.random() < 0.7 else x
        if self.rng.random() < 0.5:
            x, y = y, x
        op = self.rng.choice(["add", "multiply", "subtract", "maximum"])
        mag = {"add": x.mag + y.mag, "subtract": x.mag + y.mag, "maximum": max(x.mag, y.mag),
               "multiply": x.mag * y.mag}[op]
        if mag > MAX_MAG:
            op, mag = "maximum", max(x.mag, y.mag)
        return self.emit(op, x.ty, op, [x.name, y.name], mag=mag)

    def op_select(self, cur):
        x = self.pick(cur)
        y = self.value_of(x.ty, avoid=x)
        direction = self.rng.choice(["EQ", "NE", "LT", "LE", "GT", "GE"])
        c = self.emit("compare", ("pred", x.ty[1]), "compare", [x.name, y.name], attrs=", direction=" + direction)
        if self.rng.random() < 0.15:
            self.extra_outputs.append(c)  # a pred result too
        a, b = (x, y) if self.rng.random() < 0.5 else (y, x)
        return self.emit("select", x.ty, "select", [c.name, a.name, b.name], mag=max(a.mag, b.mag))

    def op_broadcast(self, cur):
        x = self.pick(cur, lambda v: len(v.ty[1]) < MAX_RANK)
        dims = list(x.ty[1])
        k = self.rng.randint(1, min(2, MAX_RANK - len(dims)))
        out = list(dims)
        pos = list(range(len(dims)))  # where operand dimension i lands
        for _ in range(k):
            at = self.rng.randint(0, len(out))
            out.insert(at, self.rng.choice([1, 2, 3, 4, 5, 6, 8]))
            pos = [p + 1 if p >= at else p for p in pos]
        attrs = ", dimensions={%s}" % ",".join(map(str, pos))
        return self.emit("broadcast", (x.ty[0], tuple(out)), "broadcast", [x.name], attrs=attrs, mag=x.mag)

    def op_transpose(self, cur):
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 2)
        r = len(x.ty[1])
        perm = list(range(r))
        while perm == sorted(perm):
            self.rng.shuffle(perm)
        out = tuple(x.ty[1][p] for p in perm)
        attrs = ", dimensions={%s}" % ",".join(map(str, perm))
        return self.emit("transpose", (x.ty[0], out), "transpose", [x.name], attrs=attrs, mag=x.mag)

    def op_reshape(self, cur):
        x = self.pick(cur)
        n = num_elements(x.ty[1])
        for _ in range(10):
            rank = self.rng.randint(1, 3)
            dims = [1] * rank
            for f in prime_factors(n):
                dims[self.rng.randrange(rank)] *= f
            if self.rng.random() < 0.2 and rank < MAX_RANK:
                dims.insert(self.rng.randint(0, rank), 1)
            if tuple(dims) != x.ty[1]:
                return self.emit("reshape", (x.ty[0], tuple(dims)), "reshape", [x.name], mag=x.mag)
        raise Skip("no reshape")

    def reduce_init(self, kind, dtype, identity=True):
        """The reduction's init constant: its identity, or (identity=False) some other value."""
        if not identity:
            return self.constant(dtype, self.rng.choice([1.0, 0.5, -1.0]) if dtype in FLOATS else self.rng.randint(-2, 2))
        if kind == "add":
            return self.constant(dtype, 0.0 if dtype in FLOATS else 0)
        if kind == "max":
            return self.constant(dtype, float("-inf") if dtype in FLOATS else -2147483648)
        return self.constant(dtype, float("inf") if dtype in FLOATS else 2147483647)

    def op_reduce(self, cur):
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        dims = x.ty[1]
        kind = self.rng.choice(["add", "add", "max", "min"])
        if kind == "add":
            x = self.to_summable(x)
        dtype = x.ty[0]
        rdims = sorted(self.rng.sample(range(len(dims)), self.rng.randint(1, len(dims))))
        count = num_elements([dims[d] for d in rdims])
        init = self.reduce_init(kind, dtype, identity=self.rng.random() < 0.8)
        mag = x.mag * count + init.mag if kind == "add" else max(x.mag, init.mag)
        out = tuple(d for k, d in enumerate(dims) if k not in rdims)
        comp = self.scalar_comp(kind, dtype)
        attrs = ", dimensions={%s}, to_apply=%%%s" % (",".join(map(str, rdims)), comp)
        return self.emit("reduce", (dtype, out), "reduce", [x.name, init.name], attrs=attrs, mag=mag, comps=[comp])

    def op_argmax(self, cur):
        """A variadic reduce (value, index) picking the largest value, the smallest index among equal ones: exact and
        independent of the reduction order."""
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1 and v.ty[0] in ("f32", "s32"))
        dtype, dims = x.ty
        d = self.rng.randrange(len(dims))
        idx = self.emit("iota", ("s32", dims), "iota", attrs=", iota_dimension=%d" % d, mag=float(dims[d]))
        name = "argmax_" + dtype
        if name not in self.p.comps:
            t = dtype + "[]"
            text = "\n".join([
                "%%%s (a: %s, ai: s32[], b: %s, bi: s32[]) -> (%s, s32[]) {" % (name, t, t, t),
                "  %%%s.a = %s parameter(0)" % (name, t),
                "  %%%s.ai = s32[] parameter(1)" % name,
                "  %%%s.b = %s parameter(2)" % (name, t),
                "  %%%s.bi = s32[] parameter(3)" % name,
                "  %%%s.gt = pred[] compare(%s %%%s.a, %s %%%s.b), direction=GT" % (name, t, name, t, name),
                "  %%%s.eq = pred[] compare(%s %%%s.a, %s %%%s.b), direction=EQ" % (name, t, name, t, name),
                "  %%%s.lt = pred[] compare(s32[] %%%s.ai, s32[] %%%s.bi), direction=LT" % (name, name, name),
                "  %%%s.tie = pred[] and(pred[] %%%s.eq, pred[] %%%s.lt)" % (name, name, name),
                "  %%%s.pick = pred[] or(pred[] %%%s.gt, pred[] %%%s.tie)" % (name, name, name),
                "  %%%s.v = %s select(pred[] %%%s.pick, %s %%%s.a, %s %%%s.b)" % (name, t, name, t, name, t, name),
                "  %%%s.i = s32[] select(pred[] %%%s.pick, s32[] %%%s.ai, s32[] %%%s.bi)" % (name, name, name, name),
                "  ROOT %%%s.r = (%s, s32[]) tuple(%s %%%s.v, s32[] %%%s.i)" % (name, t, t, name, name),
                "}"])
            self.p.add_comp(name, text)
        vinit = self.reduce_init("max", dtype)
        iinit = self.constant("s32", 0)
        out = tuple(k for i, k in enumerate(dims) if i != d)
        ty = ("tuple", [(dtype, out), ("s32", out)])
        r = self.emit("argmax", ty, "reduce", [x.name, idx.name, vinit.name, iinit.name],
                      attrs=", dimensions={%d}, to_apply=%%%s" % (d, name), comps=[name])
        v = self.emit("gte", (dtype, out), "get-tuple-element", [r.name], attrs=", index=0", mag=x.mag)
        i = self.emit("gte", ("s32", out), "get-tuple-element", [r.name], attrs=", index=1", mag=float(dims[d]))
        if self.rng.random() < 0.5:
            self.extra_outputs.append(v)
            return i
        self.extra_outputs.append(i)
        return v

    def op_dot(self, cur):
        rng = self.rng
        x = self.to_summable(self.pick(cur, lambda v: 1 <= len(v.ty[1]) <= 3))
        dtype, dims = x.ty
        r = len(dims)
        nb = rng.choice([0, 0, 1]) if r >= 2 else 0
        nc = min(r - nb, rng.choice([1, 1, 1, 2, 0]))
        order = list(range(r))
        rng.shuffle(order)
        lb, lc = sorted(order[:nb]), sorted(order[nb:nb + nc])
        lf = [d for d in range(r) if d not in lb and d not in lc]
        nf = rng.choice([0, 1, 1])
        free = [rng.choice([1, 2, 3, 4, 5, 6, 8]) for _ in range(nf)]
        # rhs dimensions: batch, contracting and free, in a random order.
        roles = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("f", i) for i in range(nf)]
        rng.shuffle(roles)
        rdims, rb, rc = [], [None] * nb, [None] * nc
        for pos, (role, i) in enumerate(roles):
            if role == "b":
                rdims.append(dims[lb[i]])
                rb[i] = pos
            elif role == "c":
                rdims.append(dims[lc[i]])
                rc[i] = pos
            else:
                rdims.append(free[i])
        if not rdims:
            raise Skip("scalar rhs")
        rfree = [pos for pos, (role, _) in enumerate(roles) if role == "f"]
        out = tuple([dims[d] for d in lb] + [dims[d] for d in lf] + [rdims[p] for p in rfree])
        if len(out) > MAX_RANK:
            raise Skip("rank")
        y = self.value_of((dtype, tuple(rdims)))
        k = num_elements([dims[d] for d in lc])
        attrs = ""
        if nb:
            attrs += ", lhs_batch_dims={%s}" % ",".join(map(str, lb))
        attrs += ", lhs_contracting_dims={%s}" % ",".join(map(str, lc))
        if nb:
            attrs += ", rhs_batch_dims={%s}" % ",".join(map(str, rb))
        attrs += ", rhs_contracting_dims={%s}" % ",".join(map(str, rc))
        return self.emit("dot", (dtype, out), "dot", [x.name, y.name], attrs=attrs, mag=x.mag * y.mag * k)

    def op_slice(self, cur):
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        parts, out = [], []
        for d in x.ty[1]:
            start = self.rng.randint(0, d - 1)
            limit = self.rng.randint(start + 1, d)
            stride = self.rng.choice([1, 1, 1, 2, 3])
            parts.append("[%d:%d%s]" % (start, limit, ":%d" % stride if stride > 1 else ""))
            out.append((limit - start + stride - 1) // stride)
        attrs = ", slice={%s}" % ", ".join(parts)
        return self.emit("slice", (x.ty[0], tuple(out)), "slice", [x.name], attrs=attrs, mag=x.mag)

    def op_concatenate(self, cur):
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        dims = x.ty[1]
        d = self.rng.randrange(len(dims))
        ops = [x]
        for _ in range(self.rng.choice([1, 1, 2])):
            if self.rng.random() < 0.3:
                ops.append(x)
            else:
                od = list(dims)
                od[d] = self.rng.randint(1, 8)
                ops.append(self.value_of((x.ty[0], tuple(od))))
        self.rng.shuffle(ops)
        out = list(dims)
        out[d] = sum(o.ty[1][d] for o in ops)
        return self.emit("concatenate", (x.ty[0], tuple(out)), "concatenate", [o.name for o in ops],
                         attrs=", dimensions={%d}" % d, mag=max(o.mag for o in ops))

    def op_pad(self, cur):
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        dtype = x.ty[0]
        pv = self.constant(dtype, self.rng.choice([0, 0, 1, -1]) * (1.0 if dtype in FLOATS else 1))
        parts, out = [], []
        for d in x.ty[1]:
            while True:
                lo, hi = self.rng.randint(-1, 3), self.rng.randint(-1, 3)
                interior = self.rng.choice([0, 0, 0, 1, 2])
                size = d + lo + hi + interior * (d - 1)
                if size >= 1 and lo + interior * (d - 1) + d >= 0:
                    break
            parts.append("%d_%d%s" % (lo, hi, "_%d" % interior if interior else ""))
            out.append(size)
        return self.emit("pad", (dtype, tuple(out)), "pad", [x.name, pv.name], attrs=", padding=" + "x".join(parts),
                         mag=max(x.mag, pv.mag))

    def op_reverse(self, cur):
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        r = len(x.ty[1])
        rd = sorted(self.rng.sample(range(r), self.rng.randint(1, r)))
        return self.emit("reverse", x.ty, "reverse", [x.name], attrs=", dimensions={%s}" % ",".join(map(str, rd)),
                         mag=x.mag)

    def op_iota_or_constant(self, cur):
        """An iota or a literal constant of the operand's shape, combined with it elementwise."""
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        dtype, dims = x.ty
        if self.rng.random() < 0.5 and num_elements(dims) <= 32:
            c = self.emit("constant", x.ty, "constant", attrs=literal_text(self.rng, dtype, dims), mag=7.0)
        else:
            d = self.rng.randrange(len(dims))
            c = self.emit("iota", x.ty, "iota", attrs=", iota_dimension=%d" % d, mag=float(dims[d]))
        op = self.rng.choice(["add", "maximum", "multiply", "subtract"])
        a, b = (x, c) if self.rng.random() < 0.5 else (c, x)
        mag = a.mag * b.mag if op == "multiply" else a.mag + b.mag
        if mag > MAX_MAG:
            op = "maximum"
        return self.emit(op, x.ty, op, [a.name, b.name], mag=mag)

    def op_dynamic_slice(self, cur):
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        sizes, idx = [], []
        for d in x.ty[1]:
            s = self.rng.randint(1, d)
            sizes.append(s)
            # Out-of-range starts clamp to [0, d - s].
            idx.append(self.constant("s32", self.rng.randint(-2, d - s + 2)))
        return self.emit("dynamic-slice", (x.ty[0], tuple(sizes)), "dynamic-slice", [x.name] + [i.name for i in idx],
                         attrs=", dynamic_slice_sizes={%s}" % ",".join(map(str, sizes)), mag=x.mag)

    def op_convert(self, cur):
        x = self.pick(cur)
        src = x.ty[0]
        targets = [t for t in ("f32", "s32", "bf16") if t != src]
        if src in FLOATS and x.mag > 1e6:
            targets.remove("s32")
        to = self.rng.choice(targets)
        if to == "s32" and src in FLOATS and x.mag <= 2 and self.rng.random() < 0.7:
            # Values in [-1, 1] mostly convert to 0: scale them first to keep the result interesting.
            k = self.constant(src, 4.0)
            kb = self.emit("broadcast", x.ty, "broadcast", [k.name], attrs=", dimensions={}", mag=4.0, shard=False)
            x = self.emit("multiply", x.ty, "multiply", [x.name, kb.name], mag=x.mag * 4)
        mag = math.floor(x.mag) + 1 if to == "s32" else x.mag
        return self.emit("convert", (to, x.ty[1]), "convert", [x.name], mag=mag)


    def op_clamp(self, cur):
        x = self.pick(cur)
        dtype = x.ty[0]
        if self.rng.random() < 0.6:
            lo_v, hi_v = sorted(self.rng.sample([-2, -1, -0.5, 0, 0.25, 0.5, 1, 3], 2))
            if dtype not in FLOATS:
                lo_v, hi_v = int(math.floor(lo_v)), int(math.ceil(hi_v)) + 2
            lo, hi = self.constant(dtype, lo_v), self.constant(dtype, hi_v)
        else:
            lo, hi = self.value_of(x.ty, avoid=x), self.value_of(x.ty, avoid=x)
        return self.emit("clamp", x.ty, "clamp", [lo.name, x.name, hi.name], mag=max(lo.mag, hi.mag))

    def op_dynamic_update_slice(self, cur):
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        dtype, dims = x.ty
        udims = tuple(self.rng.choice([d, self.rng.randint(1, d)]) for d in dims)
        if self.rng.random() < 0.5:
            upd = self.value_of((dtype, udims), avoid=x)
        else:
            # A slice of x itself, so the update is sharded like x where it can be.
            parts = ["[0:%d]" % u for u in udims]
            upd = self.emit("slice", (dtype, udims), "slice", [x.name], attrs=", slice={%s}" % ", ".join(parts),
                            mag=x.mag)
        idx = [self.constant("s32", self.rng.randint(-1, d - u + 1)) for d, u in zip(dims, udims)]
        return self.emit("dynamic-update-slice", x.ty, "dynamic-update-slice", [x.name, upd.name] + [i.name for i in idx],
                         mag=max(x.mag, upd.mag))

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
    def snapshot(self):
        return (self.p, len(self.p.insts), len(self.p.comp_order), self.num_params, len(self.extra_outputs),
                {k: list(v) for k, v in self.callees.items()})

    def rollback(self, snap):
        """Undoes everything emitted since snap (instructions, computations, parameters, outputs, callees)."""
        p, n, ncomps, nparams, nextra, callees = snap
        self.p = p
        for i in p.insts[n:]:
            del p.by_name[i.name]
        del p.insts[n:]
        for c in p.comp_order[ncomps:]:
            del p.comps[c]
        del p.comp_order[ncomps:]
        self.num_params = nparams
        del self.extra_outputs[nextra:]
        self.callees = callees

    def run_chain(self, cur, nops):
        """Appends up to nops random ops to the current computation, starting from cur; returns the last value."""
        names, weights = zip(*self.OPS)
        done = attempts = 0
        while done < nops and attempts < 200:
            attempts += 1
            op = self.rng.choices(names, weights)[0]
            snap = self.snapshot()
            try:
                cur = getattr(self, "op_" + op)(cur)
                done += 1
            except Skip:
                self.rollback(snap)
        return cur

    @contextlib.contextmanager
    def computation(self):
        """Builds a nested computation (a Program sharing the module's computations) instead of the current one."""
        saved = (self.p, self.extra_outputs, self.max_params)
        sub = Program(self.n)
        sub.comps, sub.comp_order = self.p.comps, self.p.comp_order
        self.p, self.extra_outputs, self.max_params = sub, [], 0
        self.depth += 1
        try:
            yield sub
        finally:
            self.p, self.extra_outputs, self.max_params = saved
            self.depth -= 1

    def coerce(self, v, ty, base):
        """A value of type ty from v: v itself, a reshape, a convert, or base + broadcast(max(v))."""
        if v.ty == ty:
            return v
        if v.ty[0] == ty[0] and num_elements(v.ty[1]) == num_elements(ty[1]):
            return self.emit("reshape", ty, "reshape", [v.name], mag=v.mag)
        if v.ty[1] == ty[1]:
            return self.emit("convert", ty, "convert", [v.name], mag=v.mag)
        if v.ty[1]:
            init = self.reduce_init("max", v.ty[0])
            comp = self.scalar_comp("max", v.ty[0])
            v = self.emit("reduce", (v.ty[0], ()), "reduce", [v.name, init.name],
                          attrs=", dimensions={%s}, to_apply=%%%s" % (",".join(map(str, range(len(v.ty[1])))), comp),
                          mag=v.mag, comps=[comp])
        if v.ty[0] != ty[0]:
            v = self.emit("convert", (ty[0], ()), "convert", [v.name], mag=v.mag)
        b = self.emit("broadcast", ty, "broadcast", [v.name], attrs=", dimensions={}", mag=v.mag)
        return self.emit("add", ty, "add", [base.name, b.name], mag=base.mag + b.mag)

    def bound(self, v):
        """tanh for floats, clamp to [-64, 64] for integers: loop state stays bounded whatever the trip count."""
        if v.ty[0] in FLOATS:
            return self.emit("tanh", v.ty, "tanh", [v.name], mag=1.0)
        lo, hi = self.constant(v.ty[0], -64), self.constant(v.ty[0], 64)
        return self.emit("clamp", v.ty, "clamp", [lo.name, v.name, hi.name], mag=64.0)

    def chain_to(self, x, ty, nops):
        """A random chain from x brought back to type ty (bounded)."""
        last = self.run_chain(x, nops)
        return self.bound(self.coerce(last, ty, x))

    @staticmethod
    def bounded_mag(ty, mag):
        return max(mag, 1.0 if ty[0] in FLOATS else 64.0)

    def generate(self):
        rng = self.rng
        if rng.random() < 0.15:
            self.p.header_attrs.append("allow_spmd_sharding_propagation_to_parameters={true}")
        if rng.random() < 0.2:
            self.p.header_attrs.append("allow_spmd_sharding_propagation_to_output={true}")
        cur = None
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.08:
                # A tuple parameter (with a tuple sharding), taken apart right away.
                elems = [(self.rand_dtype(), self.rand_dims()) for _ in range(2)]
                tp = self.param(("tuple", elems))
                for j, e in enumerate(elems):
                    cur = self.emit("gte", e, "get-tuple-element", [tp.name], attrs=", index=%d" % j,
                                    mag=1.0 if e[0] in FLOATS else 8.0)
            else:
                cur = self.param((self.rand_dtype(), self.rand_dims()))
        cur = self.run_chain(cur, rng.randint(3, 12))
        # The root: the chain's last value, sometimes with other values nobody uses as a tuple.
        used = {o for i in self.p.insts for o in i.operands}
        loose = [i for i in self.p.insts if i.name not in used and i is not cur and not is_tuple(i.ty)
                 and i.opcode not in ("parameter", "constant")]
        outs = [cur] + [i for i in self.extra_outputs if i is not cur]
        if loose and rng.random() < 0.5:
            outs += rng.sample(loose, min(len(loose), rng.randint(1, 2)))
        outs = list(dict.fromkeys(outs))
        if rng.random() < 0.08:
            outs.append(rng.choice(outs))  # the same value twice, possibly in two shardings
        if len(outs) > 1:
            t = self.p.add(Inst(self.fresh("out"), ("tuple", [o.ty for o in outs]), "tuple", [o.name for o in outs]))
            if rng.random() < 0.5:
                t.sharding = random_sharding(rng, t.ty, self.n)
            root = t
        else:
            root = cur
            if root.sharding is None and root.opcode != "conditional" and rng.random() < 0.4:
                root.sharding = random_sharding(rng, root.ty, self.n)
        if root.opcode == "parameter":
            raise RuntimeError("generator produced no op")
        self.p.root = root.name
        if rng.random() < 0.9:
            self.p.prune()
        return self.p


def generate(seed):
    """The program for seed: one whose result depends on at least one parameter."""
    for attempt in range(100):
        p = Generator(seed * 1000003 + attempt if attempt else seed).generate()
        if p.params():
            return p
    raise RuntimeError("no program for seed %d" % seed)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("seed", type=int)
    ap.add_argument("-o", "--output", help="write the module here instead of stdout")
    args = ap.parse_args()
    text = generate(args.seed).render()
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
