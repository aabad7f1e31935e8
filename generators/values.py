"""Per-type value pools and the value tags of a built tensor.

A pool is a small array of values of one element type, simplest first. Tensors are built from
a few pool values tiled with numpy, so every special value (extremes, infinities, signed zeros,
subnormals, values another type of the same width cannot hold) reaches the implementation
without drawing elements one by one. Extremes come from ``np.iinfo`` / ``ml_dtypes.finfo``
applied to the spec type's dtype; nothing here names a dtype."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

import ml_dtypes
import numpy as np

from spec import TensorType, catalogue
from spec.oracle import order_keys

FAR_APART = 256  # minima at least this far apart sit in different blocks of a typical tiled reduction
LANE = 8  # two adjacent minima on either side of a multiple of 8 sit in different vector lanes or tiles
_SMALL = (0, 1, 2, -1, 3, -2, 4, 5, -3, 10, 100, -100)


def finfo(dtype: np.dtype):
    return ml_dtypes.finfo(dtype)


_UINTS = {size: np.dtype(f"uint{size * 8}") for size in (1, 2, 4, 8)}


def _uint(dtype: np.dtype) -> np.dtype:
    return _UINTS[dtype.itemsize]


def step_down(value: np.generic, tensor_type: TensorType) -> np.generic | None:
    """The next representable value below ``value`` (toward -inf), or None at the bottom."""
    dtype = tensor_type.dtype
    if not tensor_type.is_float:
        below = int(value) - 1
        return dtype.type(below) if below >= np.iinfo(dtype).min else None
    bits = np.array(value, dtype).view(_uint(dtype))
    one = bits.dtype.type(1)  # numpy 1.x would promote ``bits - 1`` to a wider integer
    if value == 0:
        return -dtype.type(finfo(dtype).smallest_subnormal)
    if np.isneginf(np.float64(value)):
        return None
    step = bits - one if value > 0 else bits + one
    return step.view(dtype)[()]


def step_up(value: float, dtype: np.dtype) -> float:
    """The next representable value above a positive finite ``value`` of ``dtype``."""
    bits = np.array(value, np.float64).astype(dtype).view(_uint(dtype))
    bits = bits + bits.dtype.type(1)  # of the same width under numpy 1.x too (see step_down)
    return float(bits.view(dtype)[()])


def _array(values: list, dtype: np.dtype) -> np.ndarray:
    """Distinct values (bitwise, so -0 and +0 stay apart), in the order given."""
    if dtype.kind in "iu":
        out = np.array(values, dtype=dtype)
    else:
        with np.errstate(over="ignore"):
            out = np.array(values, dtype=np.float64).astype(dtype)
    _, first = np.unique(out.view(_uint(dtype)), return_index=True)
    return out[np.sort(first)]


def _narrower_floats(tensor_type: TensorType) -> list[TensorType]:
    return [t for t in catalogue().values() if t.family == "float" and t.dtype.itemsize < tensor_type.dtype.itemsize]


def _same_width_floats(tensor_type: TensorType) -> list[TensorType]:
    return [t for t in catalogue().values() if t.family == "float" and t.dtype.itemsize == tensor_type.dtype.itemsize
            and t.name != tensor_type.name]


@dataclass(frozen=True)
class Pools:
    """The value pools of one element type. ``detour`` holds values that a same-width type of
    another kind cannot hold exactly (what a cast detour destroys); ``detour_tag`` names it."""

    tensor_type: TensorType
    ordinary: np.ndarray
    extreme: np.ndarray
    zeros: np.ndarray | None
    subnormal: np.ndarray | None
    detour: np.ndarray | None
    detour_tag: str | None
    top: np.ndarray  # the type's top end, highest first: slices made only of these hide sentinel bugs

    @cached_property
    def constants(self) -> np.ndarray:
        """Backgrounds of all-equal slices: the extremes (where sentinels leak) and a few plain values."""
        return np.concatenate([self.extreme, self.ordinary[:3]])

    @cached_property
    def everything(self) -> np.ndarray:
        parts = [p for p in (self.ordinary, self.extreme, self.zeros, self.subnormal, self.detour) if p is not None]
        return np.concatenate(parts)


def _float_pools(tensor_type: TensorType) -> Pools:
    dtype, info = tensor_type.dtype, finfo(tensor_type.dtype)
    big, tiny, sub = float(info.max), float(info.tiny), float(info.smallest_subnormal)
    extreme = [big, -big, np.inf, -np.inf, float(step_down(dtype.type(big), tensor_type)),
               float(step_down(dtype.type(-big), tensor_type))]
    detour, tag = None, None
    siblings = _same_width_floats(tensor_type)
    if siblings:
        sibling = finfo(siblings[0].dtype)
        candidates = _array([2.0 * float(sibling.max), 1e10, big, float(sibling.smallest_subnormal) / 4, 1e-30,
                             1 + float(info.eps), 1 + 3 * float(info.eps), -2.0 * float(sibling.max), -1e-30,
                             -(1 + float(info.eps))], dtype)
        with np.errstate(over="ignore", under="ignore"):
            trip = candidates.astype(siblings[0].dtype).astype(dtype)
        finite = np.isfinite(candidates.astype(np.float64))
        changed = trip.view(_uint(dtype)) != candidates.view(_uint(dtype))
        keep = finite & (candidates.astype(np.float64) != 0) & changed
        detour, tag = candidates[keep], f"beyond-{siblings[0].name}"
    # +inf, the maximum and the value below it, then values just above a narrower float type's
    # maximum (doubles beyond float32's range): a kernel whose running minimum starts from that
    # narrower maximum cannot see past them
    beyond = [v for t in _narrower_floats(tensor_type) for m in [float(finfo(t.dtype).max)]
              for v in (step_up(m, dtype), 2 * m) if v < big]
    top = _array(sorted([np.inf, big, float(step_down(dtype.type(big), tensor_type)), *beyond], reverse=True), dtype)
    return Pools(
        tensor_type,
        top=top,
        ordinary=_array([*_SMALL, 0.5, -0.5], dtype),
        extreme=_array(extreme, dtype),
        zeros=_array([0.0, -0.0, 1.0], dtype),
        subnormal=_array([sub, -sub, 2 * sub, tiny - sub, 0.0, -(tiny - sub), tiny, -tiny], dtype),
        detour=detour if detour is not None and detour.size else None,
        detour_tag=tag,
    )


def _int_pools(tensor_type: TensorType) -> Pools:
    dtype, info = tensor_type.dtype, np.iinfo(tensor_type.dtype)
    clip = [v for v in _SMALL if info.min <= v <= info.max]
    extreme = [info.max, info.min, info.max - 1, info.min + 1, info.max // 2 + 1]
    detour, tag = None, None
    floats = _same_width_floats(tensor_type)
    if floats:
        narrow = min(floats, key=lambda f: finfo(f.dtype).nmant).dtype
        edge = 1 << (finfo(narrow).nmant + 1)
        candidates = [v for v in (info.max, info.max - 1, info.max - 2, edge + 1, edge + 3, edge + 5,
                                  (info.max >> 1) + 1, info.min + 1, info.min + 2, -edge - 1, -edge + 1)
                      if info.min < v <= info.max]
        # keep the values that the float type cannot tell from the integer just below them
        wide = np.array(candidates, dtype)
        with np.errstate(over="ignore"):
            kept = wide[wide.astype(narrow) == (wide - dtype.type(1)).astype(narrow)]
        if kept.size:
            detour, tag = _array(list(kept), dtype), f"precision-{info.bits}"
    top = _array([info.max, info.max - 1, info.max - 2, (info.max >> 1) + 1], dtype)
    return Pools(tensor_type, top=top, ordinary=_array(clip, dtype), extreme=_array(extreme, dtype), zeros=None,
                 subnormal=None, detour=detour, detour_tag=tag)


_POOLS: dict[str, Pools] = {}


def pools(tensor_type: TensorType) -> Pools:
    """The pools of a type (cached by name: hashing a TensorType costs more than the lookup)."""
    pool = _POOLS.get(tensor_type.name)
    if pool is None:
        pool = _POOLS[tensor_type.name] = _float_pools(tensor_type) if tensor_type.is_float else _int_pools(tensor_type)
    return pool


def special_tags(values: np.ndarray, pool: Pools) -> tuple[str, ...]:
    """``special:*`` tags for the values a tensor holds (repeats allowed). Cached: tensors are
    built from a few pool values, so the same sets recur."""
    bits = values.view(_uint(values.dtype)).tolist()
    return _special_tags(pool.tensor_type.name, tuple(sorted(set(bits))))


@lru_cache(maxsize=4096)
def _special_tags(name: str, bits: tuple[int, ...]) -> tuple[str, ...]:
    tensor_type = catalogue()[name]  # keyed by name: hashing the name is cheaper than the type
    pool, tags = pools(tensor_type), []
    values = np.array(bits, dtype=_uint(tensor_type.dtype)).view(tensor_type.dtype)
    if values.size == 0:
        return ()
    if tensor_type.is_float:
        info = finfo(tensor_type.dtype)
        wide = values.astype(np.float64)
        if np.isinf(wide).any():
            tags.append("special:inf")
        if ((wide == 0) & np.signbit(wide)).any():
            tags.append("special:neg-zero")
        if ((wide != 0) & (np.abs(wide) < float(info.tiny))).any():
            tags.append("special:subnormal")
        if (np.abs(wide) == float(info.max)).any():
            tags.append("special:extreme")
        if pool.detour is not None and np.isin(values.view(_uint(values.dtype)),
                                               pool.detour.view(_uint(values.dtype))).any():
            tags.append(f"special:{pool.detour_tag}")
        return tuple(tags)
    info = np.iinfo(tensor_type.dtype)
    if ((values == info.max) | (values == info.min)).any():
        tags.append("special:extreme")
    if pool.detour is not None:
        floats = _same_width_floats(tensor_type)
        narrow = min(floats, key=lambda f: finfo(f.dtype).nmant).dtype
        if np.unique(values.astype(narrow)).size < values.size:
            tags.append(f"special:{pool.detour_tag}")
    return tuple(tags)


def comparable(data: np.ndarray, tensor_type: TensorType) -> np.ndarray:
    """Data whose plain comparisons order like its values (``order_keys`` for 16-bit floats)."""
    return order_keys(data) if tensor_type.is_float and data.dtype.itemsize == 2 else data


def tie_tags(data: np.ndarray, axis: int, tensor_type: TensorType) -> list[str]:
    """``ties:*`` tags of the first slice (index 0 on every other axis): how many minima it
    holds, whether two of them are at least FAR_APART apart (a tie a blocked reduction must
    break across blocks), and whether two neighbours straddle a multiple of LANE
    (``ties:straddle``). One slice stands for all: the planted values sit at the same
    positions in every slice, and scanning everything would cost more than building the tensor."""
    n = data.shape[axis]
    if data.size == 0 or n == 1:
        return ["ties:none"]
    row = comparable(data[tuple(slice(None) if k == axis else 0 for k in range(data.ndim))], tensor_type)
    if n <= 64:
        values = row.tolist()
        lowest = min(values)
        where = [i for i, value in enumerate(values) if value == lowest]
    else:
        where = np.flatnonzero(row == row.min())
    count = len(where)
    tags = [f"ties:{'all-equal' if count == n else 'none' if count == 1 else 'two' if count == 2 else 'several'}"]
    if count >= 2 and where[-1] - where[0] >= FAR_APART:
        tags.append("ties:far-apart")
    if 2 <= count < n:
        spots = np.asarray(where)
        if np.any((np.diff(spots) == 1) & (spots[1:] % LANE == 0)):
            tags.append("ties:straddle")
    return tags
