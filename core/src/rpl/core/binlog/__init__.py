"""The binary log: MySQL 8.0's v4 event codec, GTID sets, and binlog files on disk.

``events`` encodes and decodes events byte for byte as MySQL 8.0 writes them, ``gtid`` holds
GTIDs and GTID sets (text and binary forms), ``logfile`` names binlog files, keeps the index
file and reads events back from a file. Import the submodules directly; this package
re-exports nothing.
"""
