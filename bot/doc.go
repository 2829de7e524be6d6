// Package bot turns chat messages into ledger operations and ledger facts
// into replies. It knows nothing of Telegram or SQL: transports hand it text
// and render what it returns. Reading a message into a typed command is
// package bot/command's; the core here acts on the command and speaks.
package bot
