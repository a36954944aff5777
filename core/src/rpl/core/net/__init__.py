"""The MySQL client/server protocol: packets, the handshake, authentication, result sets.

Written by hand: the Python MySQL libraries (PyMySQL, mysql-connector) implement the
client side only; the server side of the protocol exists in no maintained library.
"""
