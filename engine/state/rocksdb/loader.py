"""StateLoader: writes plain restored values into RocksDB in the layout of their state's kind."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rocksdict import Rdict, WriteBatch

from lockgate.engine.state.gil_share import sharing_the_gil
from lockgate.engine.state.rocksdb.database import scan
from lockgate.engine.state.rocksdb.keys import KeyCodec, encode_key, prefix_end
from lockgate.engine.state.rocksdb.values import dump, dump_items, load, plain, split

__all__ = ["StateLoader"]

_BATCH_ENTRIES = 4_096
_KEY_START = 4  # key group (2 bytes) and state id (2 bytes)


class StateLoader:
    """Loads plain values (as ``by_key_group`` gives them) into one RocksDB database.

    A map becomes one entry per user key, a list one entry holding its items, anything else
    (and a state of unknown kind) one entry holding the pickled value. Restored values carry
    no deadline. Writes go in batches of 4,096 entries; call ``flush`` (or use ``with``) to
    write the last one. ``convert`` moves a state stored whole into the layout of its kind.
    """

    __slots__ = ("_batch", "_codec", "_db")

    def __init__(self, db: Rdict, codec: KeyCodec) -> None:
        self._db = db
        self._codec = codec
        self._batch = WriteBatch(raw_mode=True)

    def load(self, state_id: bytes, kind: str | None, values: Mapping[Any, Any]) -> None:
        """Write ``values`` (key -> plain value) of the state ``state_id`` of kind ``kind``.

        Each key goes to the key group its hash gives it, whatever group it came in.
        """
        locate = self._codec.locate
        for key, value in sharing_the_gil(values.items()):  # often in a worker thread
            group, frame = locate(key)
            self._put(group + state_id + frame, kind, value)

    def convert(self, source: bytes, target: bytes, kind: str) -> None:
        """Rewrite entries stored whole under ``source`` in the layout of ``kind`` under ``target``.

        Both are a key group and a state id; the ``source`` entries are deleted.
        """
        for db_key, stored in scan(self._db, source, prefix_end(source)):
            _, payload = split(stored)
            self._put(target + db_key[_KEY_START:], kind, load(payload))
            self._batch.delete(db_key)
        self.flush()

    def flush(self) -> None:
        """Write what is batched."""
        if len(self._batch):
            self._db.write(self._batch)
            self._batch = WriteBatch(raw_mode=True)

    def _put(self, base: bytes, kind: str | None, value: Any) -> None:
        batch = self._batch
        if kind == "map":
            for user_key, item in value.items():
                batch.put(base + encode_key(user_key), plain(dump(item)))
        elif kind == "list":
            if value:
                batch.put(base, plain(dump_items(value)))
        else:
            batch.put(base, plain(dump(value)))
        if len(batch) >= _BATCH_ENTRIES:
            self.flush()

    def __repr__(self) -> str:
        return f"<StateLoader batched={len(self._batch)}>"
