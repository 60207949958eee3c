"""Every file Verity keeps, in an object store, read through each node's bounded cache.

`node_files(settings)` is the one door: `saved(path)` after writing a file into the data folder,
`local(key)` to read one (fetched when this node lacks it). See backends.py for the store's two kinds.
"""

from app.storage.backends import LocalStore, ObjectStore, S3Store, StoreUnavailable, check_key
from app.storage.files import NodeFiles, key_from_legacy_path, node_files, store_of

__all__ = [
    "LocalStore",
    "NodeFiles",
    "ObjectStore",
    "S3Store",
    "StoreUnavailable",
    "check_key",
    "key_from_legacy_path",
    "node_files",
    "store_of",
]
