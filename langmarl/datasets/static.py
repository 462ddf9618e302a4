"""``StaticDataset``: a fixed list of data points from lists, JSON/JSONL files or HF datasets."""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Iterable, Mapping, Sized
from pathlib import Path
from typing import Any, overload

from pydantic import ValidationError

from langmarl.core.errors import ConfigError
from langmarl.core.files import read_jsonl
from langmarl.datasets.models import DataPoint

logger = logging.getLogger(__name__)


class StaticDataset:
    """A finite dataset of :class:`DataPoint`, validated when built.

    Args:
        data: A list of dicts (or ``DataPoint``), a path to a ``.json`` (a list) or
            ``.jsonl`` file, or a Hugging Face / torch dataset (anything with ``len`` and
            indexing that yields dicts).
        seed: Seed of :meth:`sample`'s own RNG.
        min_samples: Fewer valid items than this is an error.
        strict: Raise on an invalid item instead of skipping it with a warning.
        **kwargs: Kept as metadata.

    Raises:
        ValueError: for a file that is neither JSON nor JSONL, an invalid item when
            ``strict``, or fewer than ``min_samples`` valid items.
        LangmarlError: naming the file when it is not UTF-8 or not valid JSON
            (a ``ConfigError``, also a ``ValueError``, for ``.json``).
        TypeError: for an unsupported ``data`` type.
    """

    def __init__(
        self,
        data: Any,
        seed: int = 42,
        min_samples: int = 1,
        strict: bool = False,
        **kwargs: Any,
    ) -> None:
        self._rng = random.Random(seed)
        self._metadata = {"seed": seed, "min_samples": min_samples, "strict": strict, **kwargs}
        self.data: list[DataPoint] = _validate(_raw_items(data), strict)
        if len(self.data) < min_samples:
            raise ValueError(
                f"StaticDataset has {len(self.data)} valid items, fewer than min_samples="
                f"{min_samples}; add data or lower min_samples"
            )

    def __len__(self) -> int:
        return len(self.data)

    @overload
    def __getitem__(self, index: int) -> DataPoint: ...

    @overload
    def __getitem__(self, index: slice) -> list[DataPoint]: ...

    def __getitem__(self, index: int | slice) -> DataPoint | list[DataPoint]:
        """One data point, or a list of them for a slice (``dataset[1:3]``, as CAMEL).

        Raises:
            IndexError: for an integer out of range (negative ones count from the end).
            TypeError: for an index that is neither an ``int`` nor a ``slice``.
        """
        if isinstance(index, slice):
            return self.data[index]
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError(f"StaticDataset indices are int or slice, got {type(index).__name__}")
        if not -len(self.data) <= index < len(self.data):
            raise IndexError(f"index {index} out of range for a dataset of {len(self.data)} items")
        return self.data[index]

    def sample(self) -> DataPoint:
        """One data point drawn with the dataset's own RNG."""
        return self.data[self._rng.randrange(len(self.data))]

    @property
    def metadata(self) -> dict[str, Any]:
        """A copy of the dataset's metadata."""
        return dict(self._metadata)


def _raw_items(data: Any) -> list[Any]:
    if isinstance(data, str | Path):
        return _load_file(Path(data))
    if isinstance(data, list | tuple):
        return list(data)
    if isinstance(data, Sized) and hasattr(data, "__getitem__"):
        return [data[i] for i in range(len(data))]  # HF datasets, torch datasets
    raise TypeError(
        f"StaticDataset data must be a list of dicts, a JSON/JSONL path or an indexable "
        f"dataset, got {type(data).__name__}"
    )


def _load_file(path: Path) -> list[Any]:
    from langmarl.config.loading import describe_parse_error
    from langmarl.core.files import read_input_text

    if not path.is_file():
        raise ValueError(f"dataset file {str(path)!r} does not exist")
    if path.suffix == ".jsonl":
        return list(read_jsonl(path))
    if path.suffix == ".json":
        text = read_input_text(path, "Dataset file")
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as exc:
            message = describe_parse_error(exc)
            raise ConfigError(f"Dataset file {str(path)!r} is not valid JSON: {message}") from None
        if not isinstance(loaded, list):
            raise ValueError(f"{str(path)!r} must hold a JSON list of objects")
        return loaded
    raise ValueError(f"dataset file {str(path)!r} must end in .json or .jsonl")


def _validate(items: Iterable[Any], strict: bool) -> list[DataPoint]:
    points: list[DataPoint] = []
    for index, item in enumerate(items):
        try:
            if isinstance(item, DataPoint):
                points.append(item)
            elif isinstance(item, Mapping):
                points.append(DataPoint.model_validate(dict(item)))
            else:
                raise TypeError(f"item is a {type(item).__name__}, not a dict")
        except (ValidationError, TypeError) as exc:
            if strict:
                raise ValueError(f"dataset item {index} is invalid: {exc}") from exc
            logger.warning("skipping invalid dataset item %d: %s", index, exc)
    return points
