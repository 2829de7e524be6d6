package ledger

// Removal is what TeamStore.RemoveMember did with the things of the
// member taken out of a team, so the chat can say it.
type Removal struct {
	// Handed names the rentals handed over (unreleased, owned by the
	// member in the team's ledger), in ID order.
	Handed []string
	// Revoked are the rentals whose valid agent token was revoked with
	// the removal: first those handed over, in ID order, then the others
	// whose token the member had issued (Issued), in ID order. The
	// member may hold a copy of each (it was in the install line they
	// ran or were sent), and with it could report for the team's host and
	// receive the signed orders meant for its agent. The agent on the
	// host stops with it too: /agent NAME gives a new install line.
	Revoked []RevokedToken
}

// RevokedToken names a rental whose agent token was revoked.
type RevokedToken struct {
	RentalID int64
	Rental   string
	// Issued: the rental is not the member's (an admin's /agent NAME for
	// a teammate's or an unclaimed rental); it stays with Owner (0:
	// unclaimed), who is told.
	Issued bool
	Owner  int64
}

// RevokedNames returns the names of the rentals in r.Revoked, in order.
func (r Removal) RevokedNames() []string {
	names := make([]string, len(r.Revoked))
	for i, t := range r.Revoked {
		names[i] = t.Rental
	}
	return names
}
