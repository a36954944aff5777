"""The statement and session layer: connections, sessions, statement dispatch and the
statements the server runs itself (SELECT, DML, DDL, accounts, SET, SHOW...). Features
above it (replication) add their statements, SHOW kinds and protocol commands when the
server starts; it imports nothing above it.
"""
