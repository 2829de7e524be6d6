package bot

import "github.com/gpuledger/gpuledger/ledger"

// undoKindKey is the catalog key of the words for an undone action of
// kind k ("undo_kind_rent"): derived from the ledger's kind, so a new kind
// needs only its catalog entry, which TestUndoKinds_Catalog demands.
func undoKindKey(k ledger.ActionKind) string { return "undo_kind_" + string(k) }
