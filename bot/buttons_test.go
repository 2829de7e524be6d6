package bot_test

import (
	"log/slog"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/view"
)

// testButtons returns buttons made as the server makes them, for a core
// and a scheduler that share them as the server's do.
func testButtons() *chat.Buttons {
	return chat.NewButtons([]byte("bot-test-button-secret-32-bytes!"), view.ButtonErrors(slog.New(slog.DiscardHandler)))
}
