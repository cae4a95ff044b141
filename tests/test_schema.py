"""The front end against the engine's schema of a run configuration (`_core.config_schema()`, made by schemars
from `SimConfig`, `DeviceOverrides` and `TraceOptions`): the catalog's config keys, the config reference
(`ftlsim config --example run`) and the click options of `ftlsim run` name the engine's keys with the engine's
types and defaults. A key renamed, retyped or given another default in Rust fails here."""

import sys

import click
from click.testing import CliRunner

from ftlsim import _core
from ftlsim._registry import registry
from ftlsim.cli import FLAGS, VALUED, main
from ftlsim.reference import OPTIONS, option_default, option_keys

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

SCHEMA = _core.config_schema()
SECTIONS = {"run": SCHEMA["properties"], "device": SCHEMA["definitions"]["DeviceOverrides"]["properties"],
            "trace": SCHEMA["definitions"]["TraceOptions"]["properties"]}


def prop(key: str) -> dict:
    """The schema of config key `key` (a run option, else a trace option, else a device override)."""
    for section in ("run", "trace", "device"):
        if key in SECTIONS[section] and not (section == "run" and key in ("device", "trace")):
            return SECTIONS[section][key]
    raise KeyError(key)


def json_types(schema: dict) -> set[str]:
    """The JSON types a property takes, through `$ref`, `allOf`, `anyOf` and `oneOf`."""
    if "$ref" in schema:
        return json_types(SCHEMA["definitions"][schema["$ref"].rsplit("/", 1)[1]])
    types = schema.get("type", [])
    out = {types} if isinstance(types, str) else set(types)
    for branch in schema.get("allOf", []) + schema.get("anyOf", []) + schema.get("oneOf", []):
        out |= json_types(branch)
    return out


def enum(schema: dict) -> set[str]:
    if "$ref" in schema:
        return enum(SCHEMA["definitions"][schema["$ref"].rsplit("/", 1)[1]])
    out = set(schema.get("enum", []))
    for branch in schema.get("allOf", []) + schema.get("oneOf", []):
        out |= enum(branch)
    return out


def test_the_catalogs_config_keys_are_the_schemas():
    keys = registry()["keys"]
    assert {section: set(keys[section]) for section in SECTIONS} == {s: set(p) for s, p in SECTIONS.items()}


def test_the_config_reference_has_the_schemas_keys_types_and_defaults():
    table = tomllib.loads(CliRunner().invoke(main, ["config", "--example", "run"]).output)
    python_type = {bool: "boolean", int: "integer", float: "number", str: "string"}
    for key in option_keys():
        schema = prop(key)
        assert OPTIONS[key], key
        assert option_default(key) == (None if isinstance(schema.get("default"), dict) else schema.get("default"))
        if key in table:
            given = python_type[type(table[key])]
            assert given in json_types(schema) or (given == "integer" and "number" in json_types(schema)), key


def test_the_run_commands_options_have_the_schemas_types_and_defaults():
    options = {opt: p for p in main.commands["run"].params for opt in p.opts}
    checked = 0
    for key, flag in FLAGS.items():
        assert json_types(prop(key)) == {"boolean"}, key
        assert options[flag].is_flag, flag
        checked += 1
    for key, name in VALUED.items():
        schema = prop(key) if key != "ftl" else SECTIONS["run"]["ftl"]
        option = options[name]
        if isinstance(option.type, click.Choice) and enum(schema):
            assert set(option.type.choices) == enum(schema), name
        if isinstance(option.type, (click.IntRange, type(click.INT))) and option.type.name == "integer":
            assert "integer" in json_types(schema), name
        if option.default is not None and key != "ftl":
            assert option.default == schema["default"], name
        checked += 1
    assert checked == len(FLAGS) + len(VALUED) >= 15


def test_the_schema_reader():
    """The helpers above read types, defaults and enums from the schema itself (a changed default or type of
    the click options fails the tests above: checked by hand with --power-cut-seed's default set to 2)."""
    assert json_types({"type": ["integer", "null"]}) == {"integer", "null"}
    assert json_types(prop("wrap")) == {"boolean"} != json_types(prop("power_cuts"))
    assert prop("power_cut_seed")["default"] == 1 and prop("idle_threshold_us")["default"] == 100_000.0
    assert enum(prop("precondition")) == {"none", "full", "trace"}
