package chat_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gpuledger/gpuledger/chat"
)

func TestMigratedError(t *testing.T) {
	cause := errors.New("Bad Request: group chat was upgraded to a supergroup chat")
	err := fmt.Errorf("telegram: send: %w", &chat.MigratedError{To: -1001234567890, Err: cause})
	if got := chat.MigratedTo(err); got != -1001234567890 {
		t.Errorf("MigratedTo = %d, want -1001234567890", got)
	}
	if !errors.Is(err, cause) {
		t.Error("a MigratedError does not unwrap to the transport's error")
	}
	if errors.Is(err, chat.ErrChatGone) || errors.Is(err, chat.ErrNoPrivateChat) {
		t.Error("a migrated group is neither gone nor a closed private chat")
	}
	if got := chat.MigratedTo(fmt.Errorf("x: %w", chat.ErrChatGone)); got != 0 {
		t.Errorf("MigratedTo of a gone chat = %d, want 0", got)
	}
	if got := chat.MigratedTo(nil); got != 0 {
		t.Errorf("MigratedTo(nil) = %d", got)
	}
}

func TestUpdate_RoomEvent(t *testing.T) {
	for _, tc := range []struct {
		u    chat.Update
		want bool
	}{
		{chat.Update{Kind: chat.KindText, Text: "/status"}, false},
		{chat.Update{Kind: chat.KindOther, ChatTitle: "GPU crew"}, false},
		{chat.Update{Kind: chat.KindOther, MigrateTo: -1001}, true},
		{chat.Update{Kind: chat.KindOther, MigrateFrom: -5}, true},
		{chat.Update{Kind: chat.KindOther, BotLeft: true}, true},
	} {
		if got := tc.u.RoomEvent(); got != tc.want {
			t.Errorf("%+v: RoomEvent = %v, want %v", tc.u, got, tc.want)
		}
	}
}
