"""Writes docs/operations.md, the list of nuvec's operations.

    python docs/make_operations.py

The groups, their titles and intros, and the names in each come from the op registry
(python/nuvec/_registry.py); element-wise ops' accepted and result dtypes from the tests' op table
built from it (tests/op_table.py); the promotion table from tests/helpers.py; signatures and
one-line summaries from the installed nuvec's docstrings. tests/test_docs_and_stubs.py fails when
docs/operations.md differs from what this script writes, or when nuvec exports a public name that
the registry lacks.
"""

import ast
import enum
import importlib
import inspect
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUTPUT = os.path.join(HERE, "operations.md")
sys.path.insert(0, os.path.join(ROOT, "tests"))

import nuvec  # noqa: E402
import op_table  # noqa: E402
from helpers import COMPLEX, DTYPE_NAMES, FLOATS, INTS, PROMOTE, SINTS, UINTS  # noqa: E402
from op_registry import registry  # noqa: E402

# Named groups of dtypes, used to shorten lists (largest first).
DTYPE_GROUPS = [
    ("integers", INTS),
    ("signed integers", SINTS),
    ("unsigned integers", UINTS),
    ("floats", FLOATS),
]
ABBR = {
    "bool": "b",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "float16": "f16",
    "float32": "f32",
    "float64": "f64",
    "bfloat16": "bf",
    "complex64": "c",
}


def groups():
    """(title, intro, names) of each section after the element-wise tables, in page order."""
    out = []
    for key, (title, intro) in registry.GROUPS.items():
        if key in registry.ELEMENTWISE_GROUPS or key in registry.MODULE_OPS:
            continue
        out.append((title, intro, registry.group_names(key)))
    return out


def table_aliases():
    """Other public names bound to a table op's function (conj for conjugate, ...)."""
    return {a: t for a, t in registry.ALIASES.items() if t in op_table.REQUIRED_NAMES}


# Members of `array` listed in its own section, and its operators: (syntax, dunder, function).
ARRAY_MEMBERS = [
    "shape",
    "ndim",
    "size",
    "dtype",
    "itemsize",
    "nbytes",
    "T",
    "at",
    "item",
    "tolist",
    "astype",
    "view",
]
OPERATORS = [
    ("a + b", "__add__", "add"),
    ("a - b", "__sub__", "subtract"),
    ("a * b", "__mul__", "multiply"),
    ("a / b", "__truediv__", "divide"),
    ("a // b", "__floordiv__", "floor_divide"),
    ("a % b", "__mod__", "remainder"),
    ("divmod(a, b)", "__divmod__", "divmod"),
    ("a ** b", "__pow__", "power"),
    ("a & b", "__and__", "bitwise_and"),
    ("a | b", "__or__", "bitwise_or"),
    ("a ^ b", "__xor__", "bitwise_xor"),
    ("a << b", "__lshift__", "left_shift"),
    ("a >> b", "__rshift__", "right_shift"),
    ("a == b", "__eq__", "equal"),
    ("a != b", "__ne__", "not_equal"),
    ("a < b", "__lt__", "less"),
    ("a <= b", "__le__", "less_equal"),
    ("a > b", "__gt__", "greater"),
    ("a >= b", "__ge__", "greater_equal"),
    ("-a", "__neg__", "negative"),
    ("abs(a)", "__abs__", "abs"),
    ("~a", "__invert__", "bitwise_invert"),
]


# ----------------------------------------------------------------------------- dtypes
def dtype_list(names):
    """Dtype names in the table's order, shortened with the named groups."""
    names = set(names)
    if names == set(DTYPE_NAMES):
        return "all"
    parts, left = [], set(names)
    for d in DTYPE_NAMES:
        if d not in left:
            continue
        group = next((g for g in DTYPE_GROUPS if d in g[1] and set(g[1]) <= left), None)
        if group:
            parts.append(group[0])
            left -= set(group[1])
        else:
            parts.append(d)
            left.discard(d)
    return ", ".join(parts)


def result_rule(entries):
    """The result dtype of each accepted input dtype, from every table entry of one op."""
    rule = {}
    for op in entries:
        for dt in op.dtypes:
            res = op.result_dtype(dt)
            if rule.setdefault(dt, res) != res:
                raise ValueError(f"{op.name}: entries disagree on the result for {dt}")
    return rule


def describe_result(rule):
    kept = [d for d, r in rule.items() if r == d]
    changed = {}
    for d, r in rule.items():
        if r != d:
            changed.setdefault(r, []).append(d)
    if len(set(rule.values())) == 1 and len(rule) > 1:
        return next(iter(rule.values()))
    if not changed:
        return "the input's"
    moves = "; ".join(f"{dtype_list(ds)} → {r}" for r, ds in changed.items())
    return f"the input's; {moves}" if kept else moves


# ----------------------------------------------------------------------------- signatures
def _strip_annotations(sig):
    """`add(a: object, *, stream: object | None = None) -> array` -> `add(a, *, stream=None)`."""
    try:
        fn = ast.parse(f"def {sig}: pass").body[0]
    except SyntaxError:
        return sig
    args = fn.args
    for a in args.posonlyargs + args.args + args.kwonlyargs:
        a.annotation = None
    for a in (args.vararg, args.kwarg):
        if a is not None:
            a.annotation = None
    return f"{fn.name}({ast.unparse(args)})"


def signature_and_summary(obj, name):
    """(call signature or None, one-line summary) from a docstring or from inspect."""
    if isinstance(obj, type):
        doc = obj.__dict__.get("__doc__") or ""  # its own, not one inherited (Enum's)
        if not doc.strip() and issubclass(obj, enum.Enum):
            doc = "Members: " + ", ".join(f"`{m}`" for m in obj.__members__) + "."
    else:
        doc = inspect.getdoc(obj) or ""
    lines = doc.strip().splitlines()
    sig = None
    first = re.match(r"(\w+)\(.*\)", lines[0].strip()) if lines else None
    if first and first.group(1) != name and getattr(nuvec, first.group(1), None) is obj:
        return None, f"Another name for `{first.group(1)}`."
    if first and first.group(1) == name:
        sig = _strip_annotations(lines[0].strip())
        lines = lines[1:]
        # nanobind's overloads: one signature line each, then "Overloaded function." and numbered forms.
        forms = []
        while lines and re.match(rf"{name}\(.*\)", lines[0].strip()):
            forms.append(_strip_annotations(lines.pop(0).strip()))
        if forms:
            lines = [
                ln
                for ln in lines
                if ln.strip() != "Overloaded function." and not re.match(r"\d+\. ``", ln.strip())
            ]
            lines += ["Also " + ", ".join(f"`{f}`" for f in forms) + "."]
    elif callable(obj) and not isinstance(obj, type):
        try:
            full = inspect.signature(obj)  # shown without annotations, as the compiled ops are
            bare = [p.replace(annotation=p.empty) for p in full.parameters.values()]
            sig = name + str(full.replace(parameters=bare, return_annotation=full.empty))
        except (TypeError, ValueError):
            sig = None
    text = " ".join(" ".join(lines).split()) or "*(no docstring)*"
    return sig, text


def code(s):
    """A code span for a table cell (GitHub's tables need `|` escaped even in code)."""
    return "`" + s.replace("|", "\\|") + "`" if s else ""


def cell(text):
    return text.replace("|", "\\|")


def param_name(sig, index):
    """The name of parameter `index` in `name(a, b, ...)`, or None."""
    try:
        args = ast.parse(f"def {sig}: pass").body[0].args
    except SyntaxError:
        return None
    params = args.posonlyargs + args.args
    return params[index].arg if index < len(params) else None


# ----------------------------------------------------------------------------- sections
def elementwise_section(title, ops):
    by_name = {}
    for op in ops:
        by_name.setdefault(op.name, []).append(op)
    out = [f"### {title}", "", "| op | accepted dtypes | result dtype |", "|---|---|---|"]
    for name, entries in by_name.items():
        rule = result_rule(entries)
        sig, _ = signature_and_summary(getattr(nuvec, name), name)
        result = describe_result(rule)
        if any(op.n_out > 1 for op in entries):
            result = f"two arrays: {result}"
        if any(op.reduces for op in entries):
            result = f"{result} (0-d)"
        notes = []
        for op in entries:
            for slot, dt in op.fixed.items():
                notes.append(f"`{param_name(sig, slot) or f'argument {slot + 1}'}` is {dt}")
        accepted = dtype_list(rule)
        if notes:
            accepted += f" ({'; '.join(sorted(set(notes)))})"
        out.append(f"| {code(sig or name)} | {accepted} | {result} |")
    out.append("")
    return out


def promotion_section():
    cols = [ABBR[d] for d in DTYPE_NAMES]
    out = [
        "### Type promotion",
        "",
        "Two arrays of different dtypes first promote to a common dtype (symmetric; "
        + ", ".join(f"{ABBR[d]}={d}" for d in DTYPE_NAMES)
        + "):",
        "",
        "| | " + " | ".join(cols) + " |",
        "|---" * (len(cols) + 1) + "|",
    ]
    for a in DTYPE_NAMES:
        out.append(
            f"| **{ABBR[a]}** | " + " | ".join(ABBR[PROMOTE[(a, b)]] for b in DTYPE_NAMES) + " |"
        )
    out.append("")
    return out


def group_section(title, intro, names):
    out = [f"## {title}", "", intro, "", "| name | what it does |", "|---|---|"]
    for name in names:
        # Subpackages such as nn load on first import, not with nuvec itself (as mlx.nn).
        obj = (
            getattr(nuvec, name)
            if hasattr(nuvec, name)
            else importlib.import_module(f"nuvec.{name}")
        )
        if isinstance(obj, nuvec.Dtype):
            out.append(f"| `{name}` | a dtype of {obj.size} byte{'s' * (obj.size > 1)} |")
            continue
        if isinstance(obj, enum.Enum):  # devices types, dtype categories
            out.append(f"| `{name}` | `{obj!r}` |")
            continue
        if obj is None or isinstance(obj, (int, float)):  # constants
            out.append(f"| `{name}` | `{obj!r}` |")
            continue
        sig, text = signature_and_summary(obj, name)
        label = f"class `{name}`" if isinstance(obj, type) else code(sig or name)
        out.append(f"| {label} | {cell(text)} |")
    out.append("")
    return out


def array_section():
    out = [
        "## The `array` class",
        "",
        "`array(val, dtype=None)` makes an array from a scalar, a nested sequence, a NumPy "
        "array, a buffer or a DLPack object. Its members:",
        "",
        "| member | what it is |",
        "|---|---|",
    ]
    for name in ARRAY_MEMBERS:
        obj = inspect.getattr_static(nuvec.array, name)
        if isinstance(obj, property):
            out.append(f"| `.{name}` | property |")
        else:
            sig, text = signature_and_summary(getattr(nuvec.array, name), name)
            out.append(f"| {code('.' + _drop_self(sig or name))} | {cell(text)} |")
    out += [
        "",
        "Operators call the element-wise ops (a Python scalar operand is weak, as in "
        "MLX; the reflected forms exist too). An operand must be an array, a scalar or an "
        "array-like (a NumPy array, a buffer, a DLPack producer), which is converted to the "
        "array's dtype, as MLX (`int8 + np.array([3.5])` is `int8`): a list, a tuple or another "
        "object raises `OpError`, except that `==` and `!=` then give `False` and `True`, as "
        "MLX. In-place forms (`a += b`, ..., `a @= b`) replace the array inside the Python "
        "object, as MLX: other names for that object see the new value (`/=` of an integer "
        "array raises, as its dtype would change).",
        "",
        "| syntax | op |",
        "|---|---|",
    ]
    for syntax, dunder, fn in OPERATORS:
        if not hasattr(nuvec.array, dunder):
            raise ValueError(f"array has no {dunder}")
        out.append(f"| {code(syntax)} | `{fn}` |")
    out += [
        "",
        "Indexing follows NumPy: ints, slices, `...` and `None` give views (an int out "
        "of range raises `AxisError` at the call); integer arrays (and lists, NumPy arrays) "
        "gather, and boolean arrays select where true (evaluating the mask at once). "
        "`x[index] = v` updates the array object in place (other names for that object see "
        "the change, as in MLX); `x.at[index].add(v)` (also `subtract`, `multiply`, "
        "`divide`, `maximum`, `minimum`) returns a new array and accumulates over repeated "
        "indices.",
        "",
    ]
    return out


def _drop_self(sig):
    return sig.replace("(self, ", "(").replace("(self)", "()")


# ----------------------------------------------------------------------------- the page
def covered_names():
    names = set(op_table.REQUIRED_NAMES) | set(table_aliases())
    for _, _, group in groups():
        names.update(group)
    return names


def undocumented():
    """Public names of nuvec that no section lists."""
    public = {n for n in dir(nuvec) if not n.startswith("_")}
    return sorted(public - covered_names())


def render():
    lines = [
        "<!-- generated by docs/make_operations.py from python/nuvec/_registry.py; do not edit -->",
        "",
        "# Operations",
        "",
        "Generated by `docs/make_operations.py` from the op registry (`python/nuvec/_registry.py`) "
        "and the tests' op table built from it (`tests/op_table.py`, which checks every op "
        "against NumPy); do not edit: change the registry or the script and run "
        "`python docs/make_operations.py`.",
        "",
        "Ops take a keyword-only `stream` (a stream, a device, or None for the default) where "
        "their signature shows it. "
        "Dtype groups below: integers = "
        + ", ".join(INTS)
        + "; floats = "
        + ", ".join(FLOATS)
        + "; "
        + COMPLEX[0]
        + " is the only complex dtype.",
        "",
        "## Element-wise",
        "",
        "Element-wise ops take arrays or anything `array()` accepts (scalars, nested lists, NumPy "
        "arrays). Broadcasting follows NumPy. The result dtype is given for inputs of one dtype; "
        "mixed dtypes promote first (table below); a Python scalar is weak, taking the array's "
        'dtype where its value allows (docs/getting-started.md). "the input\'s" means the result '
        "keeps the (promoted) input dtype.",
        "",
    ]
    lines += elementwise_section("Unary", op_table.UNARY)
    lines += elementwise_section("Binary", op_table.BINARY)
    lines += elementwise_section("Ternary", op_table.TERNARY)
    for alias, target in sorted(table_aliases().items()):
        lines += [f"`{alias}` is another name for `{target}`.", ""]
    lines += promotion_section()
    for title, intro, names in groups():
        lines += group_section(title, intro, names)
    lines += array_section()
    return "\n".join(lines).rstrip() + "\n"


def main():
    missing = undocumented()
    if missing:
        print(f"warning: public names no group lists: {', '.join(missing)}", file=sys.stderr)
    text = render()
    with open(OUTPUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {os.path.relpath(OUTPUT, ROOT)}")


if __name__ == "__main__":
    main()
