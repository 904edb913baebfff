"""The package's surface: stubs for every public name, help that reads well."""

import ast
import pathlib
import pydoc

import interloper as il


def test_every_public_name_has_a_stub():
    stub = pathlib.Path(il.__file__).with_name("__init__.pyi")
    tree = ast.parse(stub.read_text())
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    assert set(il.__all__) <= names, set(il.__all__) - names
    assert all(hasattr(il, name) for name in il.__all__)


def test_help_reads_well():
    text = pydoc.render_doc(il.TimeGranularity, renderer=pydoc.plaintext)
    assert "ISO-8601" in text and "truncate(" in text and "The start of the period holding t" in text
    assert "partition_date" in pydoc.render_doc(il.ExecutionContext, renderer=pydoc.plaintext)
    for name in il.__all__:
        assert getattr(il, name).__doc__, name


def test_partition_errors_are_value_errors():
    assert issubclass(il.PartitionError, ValueError) and issubclass(il.PartitionError, il.Error)
    assert issubclass(il.DataError, ValueError)
    assert il.PartitionError.__module__ == "interloper"
