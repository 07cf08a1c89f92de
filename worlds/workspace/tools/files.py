"""File tools: finding files the owner can open, and (for files the owner owns) exactly who
can open them: viewer, commenter or editor grants, and link sharing."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from sqlalchemy import exists, func, or_
from sqlmodel import Session, col, select

from mcpsim.world import ToolContext, WorldError

from .. import world
from ..inputs import Email, FileId, Limit, Offset, Role
from ..rules import (
    COMPANY,
    DOMAIN,
    check_addresses,
    display_name,
    is_internal,
    iso,
    normalize_email,
    owner,
    role_of,
    visible_file,
)
from ..tables import File, FilePermission
from ..views import FilePermissions, FileSearchResult, FileView, PermissionView

Kind = Literal["document", "spreadsheet", "presentation", "pdf", "image"]


def _file_view(session: Session, file: File, me: str) -> FileView:
    shared = session.exec(
        select(func.count()).select_from(FilePermission).where(FilePermission.file_id == file.id)
    ).one()
    return FileView.from_row(
        file,
        owner_name=display_name(session, file.owner_email),
        your_role=role_of(session, file, me) or "none",
        modified_utc=file.modified_at,
        shared_with_count=shared,
    )


def _permissions(session: Session, file: File) -> FilePermissions:
    grants = session.exec(
        select(FilePermission).where(FilePermission.file_id == file.id).order_by(FilePermission.email)
    ).all()
    return FilePermissions.from_row(
        file, permissions=[PermissionView.from_row(g, name=display_name(session, g.email)) for g in grants]
    )


def _owned(ctx: ToolContext, file_id: str, me: str, verb: str) -> File:
    file = visible_file(ctx.session, file_id, me)
    if file.owner_email != me:
        raise WorldError(
            f"Only the owner of '{file.name}', {display_name(ctx.session, file.owner_email) or file.owner_email} "
            f"({file.owner_email}), can {verb}; your role on it is {role_of(ctx.session, file, me)}. Ask the owner."
        )
    return file


@world.tool(read_only=True, idempotent=True)
def search_files(
    ctx: ToolContext,
    query: Annotated[
        str | None, Field(description="Words that must all appear in the file name or folder.", max_length=100)
    ] = None,
    owned_by: Annotated[Literal["me", "others", "anyone"], Field(description="Whose files.")] = "anyone",
    kind: Kind | None = None,
    shared_with: Annotated[Email | None, Field(description="Only files this person has a grant on.")] = None,
    limit: Limit = 10,
    offset: Offset = 0,
) -> FileSearchResult:
    """Find files the owner owns or has been given access to, by name or folder words, owner,
    kind and who they are shared with; most recently modified first."""
    me = owner(ctx.session).email
    mine = col(File.owner_email) == me
    granted = exists().where(col(FilePermission.file_id) == File.id, col(FilePermission.email) == me)
    statement = select(File).where({"me": mine, "others": granted, "anyone": or_(mine, granted)}[owned_by])
    for word in (query or "").split():
        statement = statement.where(or_(col(File.name).like(f"%{word}%"), col(File.folder).like(f"%{word}%")))
    if kind is not None:
        statement = statement.where(File.kind == kind)
    if shared_with is not None:
        statement = statement.where(
            exists().where(
                col(FilePermission.file_id) == File.id, col(FilePermission.email) == normalize_email(shared_with)
            )
        )
    total = ctx.session.exec(select(func.count()).select_from(statement.subquery())).one()
    newest_first = statement.order_by(col(File.modified_at).desc(), File.id)
    files = ctx.session.exec(newest_first.offset(offset).limit(limit)).all()
    return FileSearchResult(total_count=total, files=[_file_view(ctx.session, f, me) for f in files])


@world.tool(read_only=True, idempotent=True)
def get_file(ctx: ToolContext, file_id: FileId) -> FileView:
    """One file: name, kind, folder, owner, your role, whether it is confidential, link
    sharing and how many people it is shared with."""
    me = owner(ctx.session).email
    return _file_view(ctx.session, visible_file(ctx.session, file_id, me), me)


@world.tool(read_only=True, idempotent=True)
def list_file_permissions(ctx: ToolContext, file_id: FileId) -> FilePermissions:
    """Who can open a file: its owner, every person with a grant (viewer, commenter or editor)
    and whether anyone with the link can view it."""
    me = owner(ctx.session).email
    return _permissions(ctx.session, visible_file(ctx.session, file_id, me))


@world.tool(idempotent=True, irreversible=True)
def share_file(
    ctx: ToolContext,
    file_id: FileId,
    emails: Annotated[list[Email], Field(description="Who to share with.", min_length=1, max_length=25)],
    role: Annotated[Role, Field(description="viewer (read), commenter (read and comment) or editor (change).")],
) -> FilePermissions:
    """Give people exactly `role` on a file the owner owns (only the owner can share): new people
    get the grant, people who already have a grant get their role changed to `role` (up or
    down). Nobody else's access changes. Addresses must be valid; a confidential file can only be
    shared inside the company's own domain."""
    me = owner(ctx.session).email
    file = _owned(ctx, file_id, me, "share it")
    people = check_addresses(ctx.session, emails)
    if me in people:
        raise WorldError(f"You own '{file.name}'; you cannot share it with yourself")
    outside = [e for e in people if not is_internal(e)]
    if file.confidential and outside:
        raise WorldError(
            f"'{file.name}' is confidential and can only be shared inside {COMPANY} (@{DOMAIN}); "
            f"{', '.join(outside)} is outside the company"
        )
    for email in people:
        grant = ctx.session.get(FilePermission, (file.id, email))
        if grant is None:
            ctx.session.add(
                FilePermission(file_id=file.id, email=email, role=role, granted_by=me, granted_at=iso(ctx.now))
            )
        elif grant.role != role:
            grant.role, grant.granted_at = role, iso(ctx.now)
            ctx.session.add(grant)
    ctx.session.flush()
    return _permissions(ctx.session, file)


@world.tool(destructive=True)
def revoke_access(ctx: ToolContext, file_id: FileId, email: Email) -> FilePermissions:
    """Remove one person's grant on a file the owner owns (only the owner can). Link sharing is
    separate (set_link_sharing)."""
    me = owner(ctx.session).email
    file = _owned(ctx, file_id, me, "change who can open it")
    address = normalize_email(email)
    grant = ctx.session.get(FilePermission, (file.id, address))
    if grant is None:
        raise WorldError(f"{address} has no access grant on '{file.name}'")
    ctx.session.delete(grant)
    ctx.session.flush()
    return _permissions(ctx.session, file)


@world.tool(idempotent=True, irreversible=True)
def set_link_sharing(
    ctx: ToolContext,
    file_id: FileId,
    access: Annotated[Literal["off", "viewer"], Field(description="off, or viewer: anyone with the link can view.")],
) -> FilePermissions:
    """Turn "anyone with the link can view" on or off for a file the owner owns (only the owner
    can). A confidential file can never be opened by link."""
    me = owner(ctx.session).email
    file = _owned(ctx, file_id, me, "change its link sharing")
    if access == "viewer" and file.confidential:
        raise WorldError(f"'{file.name}' is confidential; it cannot be opened by link")
    if file.link_sharing != access:
        file.link_sharing = access
        ctx.session.add(file)
    return _permissions(ctx.session, file)
