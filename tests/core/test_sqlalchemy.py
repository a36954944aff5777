"""SQLAlchemy 2.x (its MySQL dialect over PyMySQL) against a real rpl server process,
unchanged: ``metadata.create_all`` of a schema with every common column type, UNIQUE
constraints, indexes and a FOREIGN KEY; ORM round trips (a Boolean False stays False,
None stays None); reflection of each table equal to what was declared; ``drop_all``."""

from __future__ import annotations

import datetime
import enum
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Enum,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    Text,
    UniqueConstraint,
    create_engine,
    delete,
    inspect,
    select,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column


class Color(enum.Enum):
    red = "red"
    green = "green"


class Base(DeclarativeBase):
    pass


class Account(Base):
    __tablename__ = "account"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    email: Mapped[str] = mapped_column(String(80), unique=True)
    active: Mapped[bool | None] = mapped_column(Boolean)
    balance: Mapped[Decimal | None] = mapped_column(Numeric(10, 2))
    visits: Mapped[int | None] = mapped_column(BigInteger)
    bio: Mapped[str | None] = mapped_column(Text)
    joined: Mapped[datetime.date | None] = mapped_column(Date)
    seen: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    color: Mapped[Color | None] = mapped_column(Enum(Color))
    data: Mapped[Any] = mapped_column(JSON, nullable=True)
    __table_args__ = (
        UniqueConstraint("visits", "joined", name="uq_visits_joined"),
        Index("ix_seen", "seen"),
    )


class Post(Base):
    __tablename__ = "post"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    account_id: Mapped[int] = mapped_column(
        ForeignKey("account.id", ondelete="CASCADE", name="fk_post_account")
    )
    title: Mapped[str] = mapped_column(String(40))


@pytest.fixture
def engine(server: Any) -> Any:
    server.query("CREATE DATABASE IF NOT EXISTS orm")
    engine = create_engine(f"mysql+pymysql://root@127.0.0.1:{server.port}/orm")
    yield engine
    engine.dispose()


def test_create_all_round_trips_reflection_and_drop_all(engine: Any) -> None:
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add_all(
            [
                Account(
                    email="a@x",
                    active=False,
                    balance=Decimal("12.50"),
                    visits=2**40,
                    bio="hello",
                    joined=datetime.date(2024, 2, 29),
                    seen=datetime.datetime(2024, 3, 1, 12, 30, 5),
                    color=Color.green,
                    data={"k": [1, 2]},
                ),
                Account(email="b@x", active=True),
                Account(email="c@x", active=None),
            ]
        )
        session.commit()
        accounts = session.scalars(select(Account).order_by(Account.id)).all()
        assert [(a.email, a.active) for a in accounts] == [
            ("a@x", False),
            ("b@x", True),
            ("c@x", None),
        ]
        first = accounts[0]
        assert (first.balance, first.visits, first.bio) == (Decimal("12.50"), 2**40, "hello")
        assert (first.joined, first.seen) == (
            datetime.date(2024, 2, 29),
            datetime.datetime(2024, 3, 1, 12, 30, 5),
        )
        assert (first.color, first.data) == (Color.green, {"k": [1, 2]})
        assert accounts[1].balance is None and accounts[1].data is None
        session.add(Post(id=1, account_id=first.id, title="t"))
        session.commit()
        first.active = True
        session.commit()
        assert session.scalars(select(Account.active).where(Account.id == first.id)).one() is True

    inspector = inspect(engine)
    assert sorted(inspector.get_table_names()) == ["account", "post"]
    columns = {c["name"]: c for c in inspector.get_columns("account")}
    assert [c for c in columns] == [
        "id",
        "email",
        "active",
        "balance",
        "visits",
        "bio",
        "joined",
        "seen",
        "color",
        "data",
    ]
    kinds = {name: c["type"].compile(dialect=engine.dialect) for name, c in columns.items()}
    assert kinds == {
        "id": "INTEGER",
        "email": "VARCHAR(80)",
        "active": "TINYINT(1)",
        "balance": "DECIMAL(10, 2)",
        "visits": "BIGINT",
        "bio": "TEXT",
        "joined": "DATE",
        "seen": "DATETIME",
        "color": "ENUM('red','green')",
        "data": "JSON",
    }
    assert columns["id"]["autoincrement"] is True and columns["id"]["nullable"] is False
    assert columns["email"]["nullable"] is False and columns["active"]["nullable"] is True
    assert inspector.get_pk_constraint("account")["constrained_columns"] == ["id"]
    uniques = {u["name"]: u["column_names"] for u in inspector.get_unique_constraints("account")}
    assert uniques == {"email": ["email"], "uq_visits_joined": ["visits", "joined"]}
    indexes = {
        i["name"]: (i["column_names"], i["unique"]) for i in inspector.get_indexes("account")
    }
    assert indexes == {
        "email": (["email"], True),
        "uq_visits_joined": (["visits", "joined"], True),
        "ix_seen": (["seen"], False),
    }
    (fk,) = inspector.get_foreign_keys("post")
    assert (
        fk["name"],
        fk["constrained_columns"],
        fk["referred_table"],
        fk["referred_columns"],
    ) == (
        "fk_post_account",
        ["account_id"],
        "account",
        ["id"],
    )
    assert fk["options"] == {"ondelete": "CASCADE"}
    assert inspector.get_foreign_keys("account") == []

    reflected = MetaData()
    post = Table("post", reflected, autoload_with=engine)
    assert [c.name for c in post.columns] == ["id", "account_id", "title"]

    with Session(engine) as session:  # ON DELETE CASCADE removes the post
        session.execute(delete(Account).where(Account.email == "a@x"))
        session.commit()
        assert session.scalars(select(Post)).all() == []
    Base.metadata.drop_all(engine)
    assert inspect(engine).get_table_names() == []
