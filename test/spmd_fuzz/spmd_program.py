"""The program model shared by the SPMD fuzz generator: types, random shardings, instructions and the
printable `Program`, literals (stdlib only). gen_spmd_module.py builds programs; run_spmd_fuzz.py shrinks them."""

import math
import random
import re

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


def layout(dims, minor_to_major=None):
    if not dims:
        return ""
    if minor_to_major is None:
        minor_to_major = reversed(range(len(dims)))
    return "{" + ",".join(str(i) for i in minor_to_major) + "}"


def type_str(ty, with_layout=True, minor_to_major=None):
    if is_tuple(ty):
        return "(" + ", ".join(type_str(t, with_layout) for t in ty[1]) + ")"
    dtype, dims = ty
    s = "%s[%s]" % (dtype, ",".join(str(d) for d in dims))
    return s + (layout(dims, minor_to_major) if with_layout else "")


def strip_shardings(text):
    """text without its `, sharding={...}` attributes (braces nest)."""
    out, i = [], 0
    while True:
        j = text.find(", sharding={", i)
        if j < 0:
            return "".join(out) + text[i:]
        out.append(text[i:j])
        k, depth = j + len(", sharding="), 0
        while True:
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            k += 1
            if depth == 0:
                break
        i = k


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
        self.layout = None  # minor_to_major of an array result; None: the default (descending)


class Program:
    def __init__(self, num_partitions):
        self.num_partitions = num_partitions
        self.insts = []
        self.by_name = {}
        self.root = None
        self.comps = {}  # name -> (text, [names of computations it calls])
        self.comp_order = []
        self.header_attrs = []  # e.g. "allow_spmd_sharding_propagation_to_output={true}"
        # The compiler fuzzer's form: no shardings (the "Sharding" custom-call becomes a copy), one partition, and
        # with layout_rng set, a random layout on some array values as they are added.
        self.unsharded = False
        self.layout_rng = None
        self.layout_prob = 0.0

    # -- construction --
    def add(self, inst):
        assert inst.name not in self.by_name, inst.name
        rng = self.layout_rng
        if rng is not None and not is_tuple(inst.ty) and len(inst.ty[1]) >= 2 and rng.random() < self.layout_prob:
            perm = list(range(len(inst.ty[1])))
            while perm == list(reversed(range(len(perm)))):
                rng.shuffle(perm)
            inst.layout = tuple(perm)
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
        p.unsharded = self.unsharded
        for i in self.insts:
            j = Inst(i.name, i.ty, i.opcode, i.operands, i.attrs, i.mag, i.param_index, i.comps)
            j.sharding = i.sharding
            j.layout = i.layout
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
        if self.unsharded:
            out = ["HloModule m", ""]
        else:
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
                out.append(strip_shardings(self.comps[c][0]) if self.unsharded else self.comps[c][0])
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
        ty = type_str(i.ty, minor_to_major=i.layout)
        if i.opcode == "parameter":
            s = "%%%s = %s parameter(%d)" % (i.name, ty, i.param_index)
        elif i.opcode == "constant":
            s = "%%%s = %s constant(%s)" % (i.name, ty, i.attrs)
        else:
            ops = ", ".join("%s %%%s" % (type_str(self.by_name[o].ty, minor_to_major=self.by_name[o].layout), o)
                            for o in i.operands)
            opcode, attrs = i.opcode, i.attrs
            if self.unsharded and opcode == "custom-call" and 'custom_call_target="Sharding"' in attrs:
                opcode, attrs = "copy", ""
            s = "%%%s = %s %s(%s)%s" % (i.name, ty, opcode, ops, attrs)
        if self.unsharded:
            return strip_shardings(s)
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
