"""core/numpy_random.h against NumPy itself: every NumpyGenerator method, draw by draw.

The native side runs through the test hook ``_testing.numpy_random(seed, program)``: a program is
a list of ``(method, args, n)`` calls made in order on one generator; ``run_numpy`` makes the same
calls on ``np.random.default_rng(seed)`` (what ``gymnasium.utils.seeding.np_random`` builds). Equal
means bit-identical: no tolerance anywhere in this file.
"""

from __future__ import annotations

import pathlib
import struct
from typing import Any

import numpy as np
import pytest

from parallel_pool import _testing

Program = list[tuple[str, tuple[Any, ...], int]]

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
SEEDS = [0, 1, 42, 2**32 - 1, 2**32, 2**63, 2**64 - 1, 123456789012345, 2**64, 2**100 + 7, 2**200 + 3]
# (low, high) with high exclusive: ranges 1, 2, 3, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 2**62, a
# range with a 25% rejection rate in each of the 32- and 64-bit paths, and negative lows.
RANGES = [
    (0, 1),
    (7, 8),
    (0, 2),
    (0, 3),
    (0, 10),
    (0, 2**31),
    (0, 2**32 - 1),
    (0, 2**32),
    (0, 2**32 + 1),
    (0, 3 * 2**30),
    (0, 2**62),
    (-5, 5),
    (-(2**40), 3),
    (INT64_MIN, 0),
    (INT64_MIN, INT64_MAX),
    (-(2**62), 2**63 - 2**60),
]
# endpoint=True ranges, including the full int64 range (a raw 64-bit draw).
CLOSED_RANGES = [(0, 0), (0, 2**32 - 1), (INT64_MIN, INT64_MAX), (-1, INT64_MAX), (INT64_MIN, 2**62), (5, 2**63 - 1)]
PROBS = [[1.0], [0.5, 0.5], [0.1, 0.0, 0.6, 0.3], [1 / 3, 1 / 3, 1 / 3], [0.8, 0.2], list(np.full(13, 1 / 13))]


def run_numpy(seed: int, program: Program) -> list[np.ndarray]:
    gen = np.random.default_rng(seed)
    bits = gen.bit_generator
    out: list[np.ndarray] = []
    for method, args, n in program:
        if method == "next_u64":
            out.append(bits.random_raw(n))
        elif method == "next_u32":
            iface = bits.ctypes
            out.append(np.array([iface.next_uint32(iface.state) for _ in range(n)], np.uint32))
        elif method == "random":
            out.append(np.array([gen.random() for _ in range(n)]))
        elif method == "uniform":
            out.append(np.array([gen.uniform(*args) for _ in range(n)]))
        elif method == "uniform_n":
            out.append(gen.uniform(*args, size=n))
        elif method == "integers":
            out.append(np.array([gen.integers(*args) for _ in range(n)], np.int64))
        elif method == "integers_n":
            out.append(gen.integers(*args, size=n))
        elif method == "integers_closed":
            out.append(np.array([gen.integers(*args, endpoint=True) for _ in range(n)], np.int64))
        elif method == "integers_closed_n":
            out.append(gen.integers(*args, size=n, endpoint=True))
        elif method == "standard_normal":
            out.append(np.array([gen.standard_normal() for _ in range(n)]))
        elif method == "normal":
            out.append(np.array([gen.normal(*args) for _ in range(n)]))
        elif method == "choice":
            out.append(np.array([gen.choice(args[0]) for _ in range(n)], np.int64))
        elif method == "choice_p":
            p = args[0]
            out.append(np.array([gen.choice(len(p), p=p) for _ in range(n)], np.int64))
        elif method == "choice_p_n":
            p = args[0]
            out.append(gen.choice(len(p), size=n, p=p))
        elif method == "shuffle":
            rows = []
            for _ in range(n):
                row = np.arange(args[0], dtype=np.int64)
                gen.shuffle(row)
                rows.append(row)
            out.append(np.array(rows, np.int64).reshape(n, args[0]))
        else:
            raise ValueError(method)
    return out


def assert_same(seed: int, program: Program) -> None:
    ours = _testing.numpy_random(seed, program)
    theirs = run_numpy(seed, program)
    assert len(ours) == len(theirs)
    for (method, args, n), a, b in zip(program, ours, theirs):
        # One value per draw; a shuffle gives one row (of its list's length) per draw.
        expected = (n, args[0]) if method == "shuffle" else (n,)
        assert a.shape == b.shape == expected, (method, args)
        # Bit equality: compare the raw bytes, so -0.0 vs 0.0 or a last-ulp difference fails.
        np.testing.assert_array_equal(
            np.ascontiguousarray(a).view(np.uint8),
            np.ascontiguousarray(b.astype(a.dtype)).view(np.uint8),
            err_msg=f"seed {seed}: {method}{args} x{n}",
        )


@pytest.mark.parametrize("seed", SEEDS)
def test_raw_streams(seed: int) -> None:
    assert_same(seed, [("next_u64", (), 3000), ("next_u32", (), 3001), ("next_u64", (), 5), ("next_u32", (), 7)])


@pytest.mark.parametrize("seed", SEEDS)
def test_floats(seed: int) -> None:
    assert_same(
        seed,
        [
            ("random", (), 3000),
            ("uniform", (-2.5, 7.25), 2000),
            ("uniform_n", (0.0, 1e300), 2000),
            ("uniform_n", (-1e-3, 1e-3), 101),
            ("uniform", (3.0, 3.0), 100),
            ("normal", (1.5, 0.25), 1000),
        ],
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_integers(seed: int) -> None:
    program: Program = []
    for low, high in RANGES:
        # Odd counts leave half a 32-bit draw buffered for the next call.
        program += [("integers", (low, high), 501), ("integers_n", (low, high), 1001)]
    for low, high in CLOSED_RANGES:
        program += [("integers_closed", (low, high), 301), ("integers_closed_n", (low, high), 301)]
    assert_same(seed, program)


@pytest.mark.parametrize("seed", SEEDS[:7])
def test_standard_normal(seed: int) -> None:
    # 200,000 draws reach the ziggurat's rejection step (~1%) and its tail (~0.03%) many times.
    assert_same(seed, [("standard_normal", (), 200_000)])


@pytest.mark.parametrize("seed", SEEDS)
def test_choice(seed: int) -> None:
    program: Program = [("choice", (k,), 301) for k in (1, 2, 3, 13, 2**31, 2**32 + 5)]
    for p in PROBS:
        program += [("choice_p", (p,), 301), ("choice_p_n", (p,), 1001)]
    assert_same(seed, program)


def random_program(rng: np.random.Generator, length: int) -> Program:
    """Random interleavings of every method with small counts: buffered halves and state carry over."""
    program: Program = []
    for _ in range(length):
        n = int(rng.integers(1, 6))
        kind = int(rng.integers(0, 12))
        low, high = RANGES[int(rng.integers(0, len(RANGES)))]
        if kind == 0:
            program.append(("next_u64", (), n))
        elif kind == 1:
            program.append(("next_u32", (), n))
        elif kind == 2:
            program.append(("random", (), n))
        elif kind == 3:
            program.append(("uniform", (-1.0, float(rng.integers(1, 9))), n))
        elif kind == 4:
            program.append(("uniform_n", (0.0, 2.0), n))
        elif kind == 5:
            program.append(("integers", (low, high), n))
        elif kind == 6:
            program.append(("integers_n", (low, high), n))
        elif kind == 7:
            program.append(("standard_normal", (), n))
        elif kind == 8:
            program.append(("choice", (int(rng.integers(1, 20)),), n))
        elif kind == 11:
            program.append(("shuffle", (int(rng.integers(0, 40)),), n))
        elif kind == 9:
            program.append(("choice_p", (PROBS[int(rng.integers(0, len(PROBS)))],), n))
        else:
            program.append(("choice_p_n", (PROBS[int(rng.integers(0, len(PROBS)))],), n))
    return program


@pytest.mark.parametrize("seed", SEEDS)
def test_shuffle(seed: int) -> None:
    # Lists of the lengths minigrid shuffles and beyond (its 64-bit branch, lists over 2**32
    # elements, is not exercised).
    assert_same(seed, [("shuffle", (k,), 20) for k in (0, 1, 2, 3, 7, 16, 100, 1000)])


@pytest.mark.parametrize("case", range(12))
def test_interleaved_methods(case: int) -> None:
    rng = np.random.default_rng(1000 + case)
    seed = SEEDS[case % len(SEEDS)] if case < len(SEEDS) else int(rng.integers(0, 2**63)) * 2 + 1
    assert_same(seed, random_program(rng, 400))


def test_errors_as_numpy() -> None:
    """NumPy's refusals are refused too (ValueError / OverflowError through pybind11)."""
    for program, numpy_error in [
        ([("integers", (3, 3), 1)], ValueError),
        ([("integers_n", (5, 2), 1)], ValueError),
        ([("choice_p", ([0.5, 0.6],), 1)], ValueError),
        ([("choice_p", ([1.5, -0.5],), 1)], ValueError),
        ([("choice", (0,), 1)], ValueError),
        ([("uniform", (-1e308, 1e308), 1)], OverflowError),
        ([("uniform_n", (3.0, -1.0), 1)], ValueError),
    ]:
        with pytest.raises(numpy_error):
            run_numpy(0, program)
        with pytest.raises(numpy_error):
            _testing.numpy_random(0, program)
    with pytest.raises(ValueError):
        _testing.numpy_random(-1, [])


# ---- The ziggurat's tables are NumPy's, entry for entry ----------------------------------------


def _elf_symbols(obj: bytes) -> dict[str, bytes]:
    """The bytes of every sized data symbol of one ELF64 little-endian relocatable object."""
    (shoff,) = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * shentsize) for i in range(shnum)]
    out: dict[str, bytes] = {}
    for sec in sections:
        if sec[1] != 2:  # SHT_SYMTAB
            continue
        strtab = sections[sec[6]]
        for off in range(sec[4], sec[4] + sec[5], 24):
            name_off, _info, _other, shndx, value, size = struct.unpack_from("<IBBHQQ", obj, off)
            if size == 0 or shndx == 0 or shndx >= len(sections):
                continue
            start = strtab[4] + name_off
            name = obj[start : obj.index(b"\0", start)].decode()
            data_off = sections[shndx][4] + value
            out[name] = obj[data_off : data_off + size]
    return out


def numpys_compiled_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ki/wi/fi_double from the static library NumPy's wheel installs for Cython users."""
    lib = pathlib.Path(np.__file__).parent / "random" / "lib" / "libnpyrandom.a"
    data = lib.read_bytes()
    assert data[:8] == b"!<arch>\n"
    pos = 8
    while pos < len(data):
        size = int(data[pos + 48 : pos + 58])
        member = data[pos + 60 : pos + 60 + size]
        if member[:4] == b"\x7fELF":
            symbols = _elf_symbols(member)
            if "wi_double" in symbols:
                return (
                    np.frombuffer(symbols["ki_double"], "<u8"),
                    np.frombuffer(symbols["wi_double"], "<f8"),
                    np.frombuffer(symbols["fi_double"], "<f8"),
                )
        pos += 60 + size + (size & 1)
    raise AssertionError(f"no ziggurat tables in {lib}")


def test_ziggurat_tables_equal_numpys_compiled_ones() -> None:
    k, w, f = _testing.numpy_ziggurat_tables()
    nk, nw, nf = numpys_compiled_tables()
    assert len(nk) == len(nw) == len(nf) == 256
    np.testing.assert_array_equal(k, nk)
    np.testing.assert_array_equal(w.view(np.uint64), nw.view(np.uint64))
    np.testing.assert_array_equal(f.view(np.uint64), nf.view(np.uint64))


# PCG64's multiplier; a state whose next output is chosen lets NumPy's standard_normal show its
# tables through its own draws (independently of how NumPy is packaged).
PCG_MULT = (0x2360ED051FC65DA4 << 64) | 0x4385DF649FCCF645
MASK128 = (1 << 128) - 1


def set_next_output(bits: np.random.PCG64, value: int) -> int:
    """Sets PCG64's state so that its next 64-bit draw is `value`; returns the state after it."""
    inc = bits.state["state"]["inc"]
    high = 0x0123456789ABCDEF  # top 6 bits 0: the XSL-RR rotation is 0, the output is high ^ low
    after = (high << 64) | (value ^ high)
    before = ((after - inc) * pow(PCG_MULT, -1, 1 << 128)) & MASK128
    bits.state = {"bit_generator": "PCG64", "state": {"state": before, "inc": inc}, "has_uint32": 0, "uinteger": 0}
    return after


def test_ziggurat_tables_agree_with_numpys_draws() -> None:
    k, w, _f = _testing.numpy_ziggurat_tables()
    gen = np.random.default_rng(5)
    bits = gen.bit_generator
    for layer in range(256):
        # |x| = 1 * w[layer], accepted unless k[layer] == 0 (layer 1): the draw shows w exactly.
        if layer != 1:
            set_next_output(bits, layer | (1 << 9))
            assert gen.standard_normal() == w[layer]
        # |x| = k - 1 is accepted on the first draw; |x| = k is not (it draws again).
        for rabs, accepted in [(int(k[layer]) - 1, True), (int(k[layer]), False)]:
            if rabs < 0:
                continue
            after = set_next_output(bits, layer | (rabs << 9))
            gen.standard_normal()
            assert (bits.state["state"]["state"] == after) == accepted, (layer, rabs)
