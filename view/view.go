// Package view renders ledger facts as chat text in the user's language
// and time zone: the rentals list, spending, budgets, balances, the
// nightly summary, who is connected to a host, ledger errors, and the
// money, price, time and date formats they use. The conversation core
// (bot) and the scheduler both speak through it, so a card and a reply
// show the same fact the same way, and the scheduler needs no parser.
//
// Texts are HTML in Telegram's subset (see package chat); user-supplied
// text is escaped, except where a function says it returns plain text.
package view
