package scheduler

import "github.com/gpuledger/gpuledger/chat"

// Messages exposes the catalog to the black-box tests.
func Messages() chat.Catalog { return messages }
