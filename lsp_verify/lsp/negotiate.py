"""What `initialize` settles from the client's capabilities, beyond what pygls does itself.

pygls builds the advertised capabilities from the registered features after the user's
`initialize` handler has run, and chooses the position encoding before it; here the
code-action options are fitted to the client, and the encoding pygls chose is noted for
everything that converts positions (SPEC section 5).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from lsp_verify.config.settings import InitOptions
    from lsp_verify.lsp.server import VerifyServer

CODE_ACTION_LITERALS = "text_document.code_action.code_action_literal_support"


def fit_to_client(ls: VerifyServer, options: InitOptions) -> InitOptions:
    """CodeActionOptions only for a client that declares CodeAction literal support (LSP
    allows them to no other: the feature is registered bare, which advertises
    `codeActionProvider: true`), and `options` with the position encoding pygls chose from
    what the client offered (`general.positionEncodings`, else UTF-16)."""
    features = ls.protocol.fm.feature_options
    if ls.has(CODE_ACTION_LITERALS):
        features[types.TEXT_DOCUMENT_CODE_ACTION] = types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix]
        )
    else:
        features.pop(types.TEXT_DOCUMENT_CODE_ACTION, None)
    encoding = ls.workspace.position_encoding or types.PositionEncodingKind.Utf16
    return dataclasses.replace(options, encoding=str(getattr(encoding, "value", encoding)))
