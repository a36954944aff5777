"""The server's SQL front end: a tokenizer and parser for the MySQL 8.0 subset it runs.

:mod:`rpl.core.sql.ast` holds the immutable statement and expression nodes (and the
functions that write expressions and values back as SQL text), :mod:`rpl.core.sql.parser`
turns one statement's text into a node or raises the :class:`~rpl.core.errors.MySQLError`
MySQL would (1064 parse error, 1065 empty query, 1235 not supported yet).
"""
