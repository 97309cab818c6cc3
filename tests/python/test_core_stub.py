"""The type stub of the extension (python/optboost/_core.pyi) against the binding itself: the
same functions, classes, methods and properties, each function and method with the same
parameters (names, and which have defaults). And the package keeps no list of loss or method
names of its own: it asks the core (``_core.loss_info``, ``_core.method_info``)."""

from __future__ import annotations

import ast
from pathlib import Path

import optboost
from optboost import _core

PACKAGE = Path(optboost.__file__).parent
STUB = ast.parse((PACKAGE / "_core.pyi").read_text())


def stub_parameters(node: ast.FunctionDef, skip_first: bool) -> list[tuple[str, bool]]:
    """(name, has a default) of each parameter of a stub's def."""
    args = node.args.args[1:] if skip_first else node.args.args
    defaults = [False] * (len(args) - len(node.args.defaults)) + [True] * len(node.args.defaults)
    return [(a.arg, d) for a, d in zip(args, defaults, strict=True)]


def binding_parameters(text_signature: str | None) -> list[tuple[str, bool]]:
    """(name, has a default) of each parameter of a binding's ``__text_signature__``, without
    the leading ``$self`` / ``$type``."""
    assert text_signature is not None
    text = text_signature.strip("()")
    parts = [p.strip() for p in text.split(",") if p.strip() and not p.strip().startswith("$")]
    return [(p.split("=")[0], "=" in p) for p in parts]


def decorators(node: ast.FunctionDef) -> set[str]:
    return {d.id for d in node.decorator_list if isinstance(d, ast.Name)}


def public(names: list[str]) -> set[str]:
    return {n for n in names if not n.startswith("__")}


def test_the_stub_lists_every_function_and_class_of_the_binding_and_no_other():
    stubbed = {
        n.name for n in STUB.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))
    } | {n.target.id for n in STUB.body if isinstance(n, ast.AnnAssign)}
    assert stubbed - {"FeatureColumns", "StopKind"} == public(dir(_core)) | {"__version__"}


def test_every_stubbed_function_takes_the_binding_parameters():
    functions = [n for n in STUB.body if isinstance(n, ast.FunctionDef)]
    assert functions
    for node in functions:
        binding = getattr(_core, node.name)
        assert stub_parameters(node, skip_first=False) == binding_parameters(
            binding.__text_signature__
        ), node.name


def test_every_stubbed_class_has_the_binding_methods_properties_and_parameters():
    classes = [n for n in STUB.body if isinstance(n, ast.ClassDef)]
    assert {c.name for c in classes} == {"Booster", "CoreModel"}
    for cls in classes:
        binding = getattr(_core, cls.name)
        defs = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
        init = defs.pop("__init__", None)
        if init is None:
            assert binding.__text_signature__ is None, f"{cls.name} has a constructor"
        else:
            assert stub_parameters(init, skip_first=True) == binding_parameters(
                binding.__text_signature__
            ), f"{cls.name}.__init__"
        assert set(defs) == public(list(vars(binding))), cls.name
        for name, node in defs.items():
            attribute = vars(binding)[name]
            kinds = decorators(node)
            where = f"{cls.name}.{name}"
            if "property" in kinds:
                assert type(attribute).__name__ == "getset_descriptor", where
            elif "staticmethod" in kinds:
                assert isinstance(attribute, staticmethod), where
                signature = getattr(binding, name).__text_signature__
                assert stub_parameters(node, skip_first=False) == binding_parameters(
                    signature
                ), where
            else:
                assert type(attribute).__name__ == "method_descriptor", where
                assert stub_parameters(node, skip_first=True) == binding_parameters(
                    attribute.__text_signature__
                ), where


def test_the_parameter_reader_sees_names_and_defaults():
    # The helpers above must see a difference, or the tests above could not fail.
    assert binding_parameters("($self, a, b=None)") == [("a", False), ("b", True)]
    node = ast.parse("def f(self, a, b=1): ...").body[0]
    assert stub_parameters(node, skip_first=True) == [("a", False), ("b", True)]


def name_lists(tree: ast.AST, names: set[str]) -> list[tuple[int, list[str]]]:
    """(line, names) of every tuple, list, set or dict display holding two names or more."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [*node.keys, *node.values]
        else:
            continue
        strings = [i.value for i in items if isinstance(i, ast.Constant)]
        hits = [s for s in strings if isinstance(s, str) and s.split("(")[0] in names]
        if len(hits) >= 2:
            found.append((node.lineno, hits))
    return found


def test_the_package_keeps_no_list_of_loss_or_method_names():
    losses = set(_core.loss_names()) | {"custom"}
    methods = set(_core.method_names())
    assert name_lists(ast.parse('X = ("squared", "cox")'), losses)  # the check sees one
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text())
        assert name_lists(tree, losses) == [], f"{path.name} lists loss names"
        assert name_lists(tree, methods) == [], f"{path.name} lists method names"


def test_loss_info_and_method_info_answer_for_every_name():
    for name in _core.loss_names():
        info = _core.loss_info(name)
        assert info["name"] == name
        assert info["target"] == _core.loss_task(name)
        assert set(info["metrics"]) <= {
            "rmse", "mae", "logloss", "error", "auc", "poisson_deviance", "gamma_deviance",
            "ndcg@k", "map@k", "mrr", "nll", "crps",
        }
    assert _core.loss_info("exponential(0.25)")["link_scale"] == 0.5
    assert _core.loss_info("pinball(0.9)")["parameter"] == ("tau", 0.9)
    assert _core.loss_info("custom")["link"] == "margin"
    for name in _core.method_names():
        info = _core.method_info(name)
        assert info["name"] == name
        assert info["step_rules"]
    assert _core.method_info("agbm")["momentum"] and not _core.method_info("gbm")["momentum"]
    assert _core.method_info("proximal")["proximal"]
