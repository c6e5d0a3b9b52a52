"""The RocksDB state backend (extra ``rocksdb``): keyed state on disk, native incremental files.

This package imports nothing of rocksdict: the extra loads when a database is first opened.
"""
