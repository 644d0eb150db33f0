"""Small value classes for the runtime's warm path, defined without ``dataclasses``.

Why not ``@dataclass``: on Python 3.11 the decorator compiles five or six methods with ``exec`` each
time a class is defined (about 0.7 ms a class on the bench machine), and importing ``dataclasses``
imports ``inspect``, ``ast`` and ``dis`` (about 10 ms). A warm ``procbench score propara`` defined
38 such classes before it read a file: a third of its start-up, and the reason it was slower than
the official scorer at 1x (issue #31, docs/performance.md).

A subclass lists its fields in ``__slots__``, in the order the dataclass had them, and writes its
own ``__init__`` (assigning with ``object.__setattr__``, as a frozen dataclass's does). ``Record``
gives the rest of what a frozen dataclass gives, with the same behaviour:

- equality and hashing over the fields, between instances of the same class only;
- a ``repr`` of the form ``Name(a=1, b='x')``;
- assignment and deletion refused (``FrozenRecordError``, an ``AttributeError``);
- ``replace(**changes)`` (``dataclasses.replace``), pickling and ``copy``.

Class keywords choose the dataclass options in use here: ``frozen=False`` (assignment allowed,
unhashable, as ``@dataclass`` without ``frozen``) and ``compare=False`` (identity equality and
hashing, as ``eq=False``). Class attributes ``_hidden`` (fields left out of ``repr``, equality and
hashing: ``field(repr=False, compare=False)``) and ``_not_init`` (fields set by ``__init__`` itself,
not taken as arguments: ``field(init=False)``) cover the rest.

``runner._canonical`` writes a record as it wrote the dataclass it replaces (``__type__`` and its
fields in order), so the fingerprints of specs and gold stay as they were.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

R = TypeVar("R", bound="Record")


class FrozenRecordError(AttributeError):
    """Assigning to or deleting a field of a frozen record (``dataclasses.FrozenInstanceError``)."""


def _rebuild(cls: type[R], values: tuple[Any, ...]) -> R:
    """An instance of ``cls`` with exactly these field values (pickle and copy), ``__init__`` not run."""
    new = object.__new__(cls)
    for name, value in zip(cls._fields, values, strict=True):
        object.__setattr__(new, name, value)
    return new


class Record:
    """Base of the runtime's small value classes; see the module's note."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()  # every field, base classes' first, in slot order
    _compared: ClassVar[tuple[str, ...]] = ()  # the fields equality, hashing and repr use
    _hidden: ClassVar[frozenset[str]] = frozenset()
    _not_init: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, *, frozen: bool = True, compare: bool = True, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("__slots__", ())
        cls._fields = cls._fields + ((own,) if isinstance(own, str) else tuple(own))
        cls._compared = tuple(name for name in cls._fields if name not in cls._hidden)
        if not frozen:
            type.__setattr__(cls, "__setattr__", object.__setattr__)
            type.__setattr__(cls, "__delattr__", object.__delattr__)
        if not compare:
            type.__setattr__(cls, "__eq__", object.__eq__)
            type.__setattr__(cls, "__hash__", object.__hash__)
        elif not frozen:
            type.__setattr__(cls, "__hash__", None)  # as a dataclass with eq and without frozen

    def _values(self) -> tuple[Any, ...]:
        return tuple([getattr(self, name) for name in self._compared])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._compared)
        return f"{type(self).__qualname__}({shown})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenRecordError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenRecordError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuild, (type(self), tuple([getattr(self, name) for name in self._fields]))

    def replace(self: R, **changes: Any) -> R:
        """A copy with ``changes``, built through ``__init__`` as ``dataclasses.replace`` builds it."""
        unknown = set(changes) - set(self._fields)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {sorted(unknown)[0]!r}")
        fixed = set(changes) & self._not_init
        if fixed:
            raise ValueError(f"field {sorted(fixed)[0]!r} is set by {type(self).__name__} itself")
        arguments = {
            name: getattr(self, name) for name in self._fields if name not in self._not_init
        }
        return type(self)(**(arguments | changes))


def record_fields(value: object) -> tuple[str, ...] | None:
    """The field names of a record, in order; None for anything else (``dataclasses.fields``)."""
    return type(value)._fields if isinstance(value, Record) else None
