"""Parameter bounds from Python: hostile parameter values are clean errors that name the key (never a traceback or an
abort), through the API, `ftlsim ram` and `ftlsim run`."""

import math

import pytest
from click.testing import CliRunner

import ftlsim
from ftlsim import _core
from ftlsim.cli import main

TOY = dict(capacity=65536, pages_per_block=8)  # 16 logical blocks of 8 pages: at most 128 extra blocks
WORKLOAD = "uniform:writes=300,seed=1"


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("key", ["over_provisioning", "read_us", "nvram_read_us", "log_blocks"])
def test_non_finite_numbers_are_refused_by_name(key, value):
    with pytest.raises(_core.FtlsimError, match=rf"^{key}={value} is not a finite number"):
        ftlsim.simulate(WORKLOAD, ftl="page", nvram="4KiB", nvram_policy="lru", **TOY, **{key: value})


@pytest.mark.parametrize(
    "ftl, key, value, limit",
    [
        ("fast", "log_blocks", 2**32 - 1, "127"),
        ("bast", "log_blocks", 128, "127"),
        ("tiny", "reserved_free_blocks", 2**31 - 1, "116"),
        ("page", "over_provisioning", 1e9, "from 0 to 1"),
        ("superblock", "extra_blocks_per_superblock", 2**32 - 2, "9"),
        ("mast", "ca_min_share", -0.5, "from 0 to 1"),
        ("nftl", "page_cache", 129, "128"),
    ],
)
def test_the_issue_reproducers_are_clean_errors_naming_scheme_key_value_and_limit(ftl, key, value, limit):
    with pytest.raises(_core.FtlsimError) as e:
        ftlsim.simulate(WORKLOAD, ftl=ftl, **TOY, **{key: value})
    msg = str(e.value)
    assert f"scheme `{ftl}`" in msg and f"{key}=" in msg and limit in msg, msg
    # `ftlsim ram` builds the scheme too: the same clean error.
    with pytest.raises(_core.FtlsimError, match=key):
        ftlsim.ram(ftl, **TOY, **{key: value})


def test_the_bound_itself_runs():
    r = ftlsim.simulate(WORKLOAD, ftl="fast", log_blocks=127, **TOY)
    assert r["host.write_requests"] == 300


@pytest.mark.parametrize(
    "key, value, expected",
    [
        # In words, not Rust's type names ("expected u32"), and spelled as the caller gives the key.
        ("log_blocks", "many", "log_blocks='many' must be a whole number; e.g. log_blocks=8"),
        ("log_blocks", -1, "log_blocks=-1 must not be negative"),
        ("log_blocks", 2**64 - 1, "log_blocks=18446744073709551615 must be at most 4,294,967,295"),
        ("pages_per_block", "eight", "invalid parameter: pages_per_block='eight' must be a whole number"),
        ("nvram_read_us", "slow", "invalid parameter: nvram_read_us='slow' must be a number"),
    ],
)
def test_wrong_types_name_the_key_and_the_expected_type(key, value, expected):
    options = dict(capacity=65536, nvram="4KiB", nvram_policy="lru", pages_per_block=8)
    options[key] = value
    with pytest.raises(_core.FtlsimError) as e:
        ftlsim.simulate(WORKLOAD, ftl="fast", **options)
    assert expected in str(e.value)
    assert "line 1 column" not in str(e.value).split(expected)[0]


@pytest.mark.parametrize("param", ["log_blocks=4294967295", "log_blocks=NaN", "log_blocks=1e999", "log_blocks=x"])
def test_ftlsim_ram_and_run_with_hostile_parameters_exit_cleanly(param):
    for args in (
        ["ram", "--ftl", "fast", "--capacity", "64KiB", "-p", param],
        ["run", WORKLOAD, "--ftl", "fast", "--capacity", "64KiB", "-p", param],
    ):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, (args, result.output, result.exception)
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        assert "log_blocks" in result.output, result.output
