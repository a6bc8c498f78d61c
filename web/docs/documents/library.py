"""Documents: multipart upload (streamed to the blob store), list, metadata, approval policy and DOCX
download."""

from __future__ import annotations

from typing import cast

from aiohttp import BodyPartReader, web
from aiohttp.http_exceptions import HttpProcessingError

from domain.consensus.policies import Approval
from domain.documents import blobs, library, proposals
from domain.kernel.errors import BadRequest
from web.docs.auth import caller
from web.docs.schemas import (
    DocumentApprovalBody,
    DocumentList,
    DocumentListQuery,
    DocumentMetadata,
    DocumentSummary,
    UploadForm,
)
from web.kernel.access import Service
from web.kernel.replies import Answer, Reply
from web.kernel.request import runtime
from web.kernel.routing import Routes, parse_model

routes = Routes()

AUTH = {401: "Missing, invalid or revoked API key", 403: "The key lacks the scope"}
NOT_FOUND = {404: "No such document in the key's organisation"}
MAX_FIELD = 4096
APPROVAL_FIELDS = tuple(UploadForm.model_fields)
FORM_FIELDS = ("title", "tags", *APPROVAL_FIELDS)
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
REPLACED = "X-Characters-Replaced"


async def _small_field(part: BodyPartReader, name: str) -> str:
    data = bytearray()
    while chunk := await part.read_chunk(1024):
        data += chunk
        if len(data) > MAX_FIELD:
            raise BadRequest(f"form field {name} is longer than {MAX_FIELD} bytes", field=name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest(f"form field {name} is not UTF-8 text", field=name) from None
    if "\x00" in text:
        raise BadRequest(f"{name}: NUL characters are not allowed", field=name)
    return text


@routes.route(
    "POST",
    "/api/documents",
    summary="Upload a document (multipart form: file, optional title, tags, approvalPolicy and "
    "allowSelfApproval); converted in the background",
    tags=["Documents"],
    response=DocumentSummary,
    status=202,
    access=Service("documents:write"),
    errors={
        **AUTH,
        413: "The file is larger than the upload limit",
        415: "Not multipart, or a file type that is not supported",
        422: "The file is empty or unusable",
    },
    aliases=["/api/masterdocuments/upload", "/api/masterdocuments"],
)
async def upload(request: web.Request) -> Answer:
    who = caller(request)
    rt = runtime(request)
    if not request.content_type.startswith("multipart/form-data"):
        raise blobs.UnsupportedMediaType(
            "upload as multipart/form-data with the file in a field named 'file'", field="file"
        )
    writer: blobs.BlobWriter | None = None
    filename: str | None = None
    fields: dict[str, str] = {}
    try:
        try:
            reader = await request.multipart()
            while (part := await reader.next()) is not None:
                if not isinstance(part, BodyPartReader):
                    continue
                if part.name == "file":
                    if writer is not None:
                        raise BadRequest("send exactly one file", field="file")
                    filename = part.filename
                    writer = blobs.BlobWriter(rt.settings.blob_dir, rt.settings.max_upload_bytes)
                    while chunk := await part.read_chunk(65536):
                        writer.write(chunk)
                    writer.close()
                elif part.name in FORM_FIELDS:
                    fields[part.name] = await _small_field(part, part.name)
                else:
                    await part.release()
        except (ValueError, AssertionError, HttpProcessingError) as exc:
            raise BadRequest(f"malformed multipart body: {exc}", field="file") from None
        if writer is None:
            raise BadRequest("the form has no 'file' field", field="file")
        approval = {k: v for k, v in fields.items() if k in APPROVAL_FIELDS}
        form = cast(UploadForm, parse_model(UploadForm, approval, "form"))
    except BaseException:
        if writer is not None:
            writer.discard()
        raise
    doc = await library.accept_upload(
        rt.db,
        who,
        writer,
        filename=filename,
        title=fields.get("title"),
        tags=fields.get("tags"),
        field="file",
        approval=Approval(form.approvalPolicy, form.allowSelfApproval),
    )
    return Reply(DocumentSummary.answer(doc), headers={"Location": f"/api/documents/{doc.id}"})


@routes.route(
    "GET",
    "/api/documents",
    summary="List the organisation's documents (tag filter, paging)",
    tags=["Documents"],
    query=DocumentListQuery,
    response=DocumentList,
    access=Service("documents:read"),
    errors=AUTH,
    aliases=["/api/masterdocuments"],
)
async def list_documents(request: web.Request, query: DocumentListQuery) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await library.list_documents(
            session, who, tag=query.tag, page=query.page, page_size=query.pageSize
        )
    return DocumentList.answer(found)


@routes.route(
    "GET",
    "/api/documents/{id}",
    summary="Document metadata: status, reviewers, comment counts",
    tags=["Documents"],
    response=DocumentMetadata,
    access=Service("documents:read"),
    errors={**AUTH, **NOT_FOUND},
    aliases=["/api/masterdocuments/{id}"],
)
async def get_document(request: web.Request) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await library.metadata(session, who, request.match_info["id"])
    return DocumentMetadata.of_metadata(found)


@routes.route(
    "PATCH",
    "/api/documents/{id}",
    summary="Set the document's approval policy (the key that uploaded it only)",
    tags=["Documents"],
    body=DocumentApprovalBody,
    response=DocumentMetadata,
    access=Service("documents:write"),
    errors={**AUTH, **NOT_FOUND, 403: "The key lacks the scope, or did not upload the document"},
    aliases=["/api/masterdocuments/{id}"],
)
async def set_approval(request: web.Request, body: DocumentApprovalBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        result = await proposals.set_approval(
            session,
            who,
            request.match_info["id"],
            policy=body.approvalPolicy,
            allow_self_approval=body.allowSelfApproval,
        )
    return DocumentMetadata.of_metadata(result)


@routes.route(
    "GET",
    "/api/documents/{id}/download",
    summary="The document as DOCX: an uploaded DOCX with merged changes applied, else built from Markdown",
    tags=["Documents"],
    access=Service("documents:read"),
    errors={**AUTH, **NOT_FOUND, 409: "Still converting", 422: "Conversion failed"},
    aliases=["/api/masterdocuments/{id}/binary"],
)
async def download(request: web.Request) -> web.Response:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await library.download(session, who, request.match_info["id"])
    headers = {"Content-Disposition": f'attachment; filename="{found.filename}"'}
    if found.replaced:  # characters a Word file cannot hold, written as visible ones
        headers[REPLACED] = str(found.replaced)
    return web.Response(body=found.data, content_type=DOCX, headers=headers)
