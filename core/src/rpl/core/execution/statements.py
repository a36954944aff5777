"""The statements the statement and session layer runs itself, put in a server's table.

The features add theirs when the server starts (replication: its statements, SHOW kinds
and protocol commands); :func:`register` is the whole list of the rest, one line each.
"""

from __future__ import annotations

from rpl.core.execution import admin, character_sets, ddl, explain, prepared, query, transactions
from rpl.core.execution.dispatch import Dispatch, plain
from rpl.core.execution.results import Ok, Result
from rpl.core.execution.session import Session
from rpl.core.sql import ast


def _commit(session: Session, stmt: ast.Commit) -> Result:
    result = Ok()
    session.commit(reply_with=result)
    return result


def _rollback(session: Session, stmt: ast.Rollback) -> Result:
    session.rollback()
    return Ok()


def register(dispatch: Dispatch) -> None:
    """Put the layer's own statements and SHOW kinds in ``dispatch``."""
    dispatch.statement(ast.Select, plain(query.run_select))
    dispatch.statement(ast.Insert, plain(query.run_insert))
    dispatch.statement(ast.Update, plain(query.run_update))
    dispatch.statement(ast.Delete, plain(query.run_delete))
    dispatch.statement(ast.Begin, plain(transactions.begin))
    dispatch.statement(ast.Commit, plain(_commit))
    dispatch.statement(ast.Rollback, plain(_rollback))
    dispatch.statement(ast.CreateTable, ddl.create_table)
    dispatch.statement(ast.DropTable, ddl.drop_table)
    dispatch.statement(ast.CreateDatabase, ddl.create_database)
    dispatch.statement(ast.DropDatabase, ddl.drop_database)
    dispatch.statement(ast.CreateIndex, ddl.create_index)
    dispatch.statement(ast.DropIndex, ddl.drop_index)
    dispatch.statement(ast.AlterTable, ddl.alter_table)
    dispatch.statement(ast.RenameTable, ddl.rename_table)
    dispatch.statement(ast.Use, plain(ddl.use_database))
    dispatch.statement(ast.CreateUser, plain(ddl.create_user))
    dispatch.statement(ast.AlterUser, plain(ddl.alter_user))
    dispatch.statement(ast.DropUser, ddl.drop_user)
    dispatch.statement(ast.Grant, ddl.grant)
    dispatch.statement(ast.Revoke, ddl.revoke)
    dispatch.statement(ast.Set, plain(admin.run_set))
    dispatch.statement(ast.SetTransaction, plain(transactions.set_transaction))
    dispatch.statement(ast.Flush, plain(admin.run_flush))
    dispatch.statement(ast.Purge, plain(admin.run_purge))
    dispatch.statement(ast.ResetMaster, plain(admin.run_reset_master))
    dispatch.statement(ast.Checksum, plain(admin.run_checksum))
    dispatch.statement(ast.InstallPlugin, plain(admin.install_plugin))
    dispatch.statement(ast.UninstallPlugin, plain(admin.uninstall_plugin))
    dispatch.statement(ast.Shutdown, plain(admin.run_shutdown))
    dispatch.statement(ast.Kill, plain(admin.run_kill))
    dispatch.statement(ast.Prepare, plain(prepared.run_prepare))
    dispatch.statement(ast.ExecutePrepared, plain(prepared.run_execute))
    dispatch.statement(ast.DeallocatePrepare, plain(prepared.run_deallocate))
    dispatch.statement(ast.Union, plain(query.run_union))
    dispatch.statement(ast.Explain, plain(explain.run_explain))
    dispatch.statement(ast.Savepoint, plain(transactions.savepoint))
    dispatch.statement(ast.RollbackToSavepoint, plain(transactions.rollback_to_savepoint))
    dispatch.statement(ast.ReleaseSavepoint, plain(transactions.release_savepoint))
    dispatch.statement(ast.LockTables, plain(transactions.lock_tables))
    dispatch.statement(ast.UnlockTables, plain(transactions.unlock_tables))
    dispatch.statement(ast.FlushTablesWithReadLock, plain(transactions.flush_tables_with_read_lock))
    for kind, handler in admin.SHOW_KINDS.items():
        dispatch.show(kind, handler)
    for kind, handler in character_sets.SHOW_KINDS.items():
        dispatch.show(kind, handler)
