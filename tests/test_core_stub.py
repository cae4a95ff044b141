"""`python/ftlsim/_core.pyi` against the compiled module: the stub names exactly the module's functions and
exceptions, each function with the parameters (names, order, defaults) the binding really takes. A function
added to, renamed in or removed from `crates/ftlsim-py/src/lib.rs` fails here until the stub says the same."""

import ast
import inspect
from pathlib import Path

from ftlsim import _core

STUB = Path(__file__).resolve().parent.parent / "python" / "ftlsim" / "_core.pyi"


def stub_items() -> tuple[dict[str, list[tuple[str, bool]]], set[str]]:
    """The stub's functions (name -> [(parameter, has a default)]) and classes."""
    tree = ast.parse(STUB.read_text())
    functions, classes = {}, set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            args = node.args.args
            first_default = len(args) - len(node.args.defaults)
            functions[node.name] = [(a.arg, i >= first_default) for i, a in enumerate(args)]
        elif isinstance(node, ast.ClassDef):
            classes.add(node.name)
    return functions, classes


def module_items() -> tuple[dict[str, list[tuple[str, bool]]], set[str]]:
    functions, classes = {}, set()
    for name, obj in vars(_core).items():
        if name.startswith("_"):
            continue
        if isinstance(obj, type):
            classes.add(name)
        elif callable(obj):
            params = inspect.signature(obj).parameters.values()
            functions[name] = [(p.name, p.default is not inspect.Parameter.empty) for p in params]
    return functions, classes


def test_stub_names_every_function_with_its_parameters():
    stub_functions, _ = stub_items()
    real_functions, _ = module_items()
    assert sorted(stub_functions) == sorted(real_functions)
    for name, params in real_functions.items():
        assert stub_functions[name] == params, f"_core.{name}: the stub says {stub_functions[name]}, the module {params}"


def test_stub_names_every_exception():
    _, stub_classes = stub_items()
    _, real_classes = module_items()
    assert stub_classes == real_classes == {"FtlsimError", "RunFailedError"}
    assert issubclass(_core.RunFailedError, _core.FtlsimError)


def test_the_check_can_fail():
    """A stub that lost a parameter's default, or a function, is told apart from the module."""
    real, _ = module_items()
    lost_default = {**real, "simulate": [("trace", False), ("config", False), ("progress", False)]}
    assert lost_default != real
    assert {k: v for k, v in real.items() if k != "ram"} != real


def test_structured_error_fields():
    """A bad configuration value crosses the binding with its key, the value given and what the key takes."""
    try:
        _core.simulate("uniform:writes=10", {"ftl": "page", "wrap": "no"})
    except _core.FtlsimError as e:
        assert (e.key, e.value, e.expected, e.suggestion) == ("wrap", "no", "must be true or false", None)
        assert "line 1 column" not in str(e)
    else:
        raise AssertionError("wrap='no' ran")
    try:
        _core.simulate("uniform:writes=10", {"ftl": "page", "device": {"erase_us": float("inf")}})
    except _core.FtlsimError as e:
        assert (e.key, e.value, e.expected) == ("device.erase_us", float("inf"), "is not a finite number")
    else:
        raise AssertionError("erase_us=inf ran")
    # An error raised in Python has the fields, set to None.
    assert _core.FtlsimError("x").key is None
