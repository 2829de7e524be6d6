package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"

	"github.com/gpuledger/gpuledger/ledger"
)

// The store, not the chat, decides who may write a team's ledger: a chat
// that shows a button or accepts a command from the wrong person still
// cannot change a record through it. These checks run inside the write
// transaction that changes the record, so a member removed a moment
// earlier is refused.

// teamRole returns person's role in the team whose ledger is ledgerID,
// and false when person is not a current member (never was, left or was
// removed) or ledgerID is no team's.
func teamRole(ctx context.Context, q querier, ledgerID, person int64) (ledger.Role, bool, error) {
	teamID, ok := ledger.TeamOf(ledgerID)
	if !ok {
		return "", false, nil
	}
	var role string
	err := q.QueryRowContext(ctx, `SELECT role FROM team_members
		WHERE team_id = ? AND user_id = ? AND removed_at IS NULL`, teamID, person).Scan(&role)
	if err == sql.ErrNoRows {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("sqlite: role of %d in team %d: %w", person, teamID, err)
	}
	return ledger.Role(role), true, nil
}

// teamActor checks the person acting on a team's ledger: a.By must be a
// current member (ENOTFOUND "team_not_member"). It returns their role
// ("" on a personal ledger, or for the system: a.By 0, which the sync,
// the agents' hub and the scheduler write as).
func teamActor(ctx context.Context, q querier, a ledger.Action) (ledger.Role, error) {
	if a.By == 0 || !ledger.IsTeamLedger(a.UserID) {
		return "", nil
	}
	role, ok, err := teamRole(ctx, q, a.UserID, a.By)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", ledger.Errorc(ledger.ENOTFOUND, "team_not_member")
	}
	return role, nil
}

// mayChange checks that a may change the record called name whose owner
// is owner: on a personal ledger, or for the system, always; on a team's
// ledger a.By must be a current member and the record theirs, unowned
// (0: a synced rental nobody has claimed) or a.By an admin or owner of
// the team. EUNAUTHORIZED "team_not_yours" names the record and its
// owner.
func mayChange(ctx context.Context, q querier, a ledger.Action, name string, owner int64) error {
	role, err := teamActor(ctx, q, a)
	if err != nil || role == "" {
		return err
	}
	if owner == 0 || owner == a.By || role.Admin() {
		return nil
	}
	who, err := memberName(ctx, q, a.UserID, owner)
	if err != nil {
		return err
	}
	return ledger.Errorc(ledger.EUNAUTHORIZED, "team_not_yours", name, who)
}

// mayChangeRecord checks that a may delete or correct the typed record
// r: a charge or traffic record as mayChange does with its owner; a
// top-up or a balance reading has no owner (it is the team's money on a
// platform, not one person's), so on a team's ledger only an admin or
// owner of the team changes it (EUNAUTHORIZED "team_admin_only"), while
// any member may still add one.
func mayChangeRecord(ctx context.Context, q querier, a ledger.Action, r ledger.Record) error {
	if r.Kind != ledger.RecordTopUp && r.Kind != ledger.RecordBalance {
		return mayChange(ctx, q, a, "#"+strconv.FormatInt(r.Ref, 10), r.Owner)
	}
	role, err := teamActor(ctx, q, a)
	if err != nil || role == "" {
		return err
	}
	if !role.Admin() {
		return ledger.Errorc(ledger.EUNAUTHORIZED, "team_admin_only")
	}
	return nil
}

// newOwner settles the owner of a record a creates on a team's ledger:
// given (nonzero) it must be a.By's own or a.By an admin (another
// member's record made for them), and a current member; none given, it is
// a.By (0 for the system: the owner is unknown and the team is asked).
// On a personal ledger the owner is stored as given.
func newOwner(ctx context.Context, q querier, a ledger.Action, name string, given int64) (int64, error) {
	role, err := teamActor(ctx, q, a)
	if err != nil {
		return 0, err
	}
	if role == "" {
		if given != 0 && ledger.IsTeamLedger(a.UserID) {
			if _, ok, err := teamRole(ctx, q, a.UserID, given); err != nil {
				return 0, err
			} else if !ok {
				return 0, ledger.Errorc(ledger.ENOTFOUND, "team_not_member")
			}
		}
		return given, nil
	}
	if given == 0 || given == a.By {
		return a.By, nil
	}
	if !role.Admin() {
		who, err := memberName(ctx, q, a.UserID, given)
		if err != nil {
			return 0, err
		}
		return 0, ledger.Errorc(ledger.EUNAUTHORIZED, "team_not_yours", name, who)
	}
	if _, ok, err := teamRole(ctx, q, a.UserID, given); err != nil {
		return 0, err
	} else if !ok {
		return 0, ledger.Errorc(ledger.ENOTFOUND, "team_not_member")
	}
	return given, nil
}

// memberName is how a team's member is named in a refusal: "@username"
// as last seen, else "id<N>" (also for someone who left: the history
// still names them).
func memberName(ctx context.Context, q querier, ledgerID, userID int64) (string, error) {
	teamID, _ := ledger.TeamOf(ledgerID)
	var username string
	err := q.QueryRowContext(ctx, `SELECT username FROM team_members WHERE team_id = ? AND user_id = ?`, teamID, userID).Scan(&username)
	if err != nil && err != sql.ErrNoRows {
		return "", fmt.Errorf("sqlite: name of member %d: %w", userID, err)
	}
	if username != "" {
		return "@" + username, nil
	}
	return "id" + strconv.FormatInt(userID, 10), nil
}

// attachedOwner settles the owner of a volume or charge a attaches to
// rental r: attaching it changes what r costs, so a must be allowed to
// change r (mayChange); none given, it is r's owner (a.By's or the
// system's default when r has none).
func attachedOwner(ctx context.Context, q querier, a ledger.Action, r *ledger.Rental, name string, given int64) (int64, error) {
	if err := mayChange(ctx, q, a, r.Name, r.Owner); err != nil {
		return 0, err
	}
	if given == 0 && r.Owner != 0 {
		return r.Owner, nil
	}
	return newOwner(ctx, q, a, name, given)
}
