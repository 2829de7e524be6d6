package bot

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// Links per user and window that /dashboard hands out. The dashboard
// server caps the codes alive at once as well; this keeps a user (or a
// stolen phone) from minting codes as fast as they can type.
const (
	DashboardLinksPerWindow = 5
	dashboardLinkWindow     = 10 * time.Minute
)

// dashboardTexts are the replies of /dashboard. No template is ever
// logged: the link signs in whoever opens it.
var dashboardTexts = chat.Catalog{
	"dash_link": {
		"📊 Your dashboard: %[1]s\nThe link works once, until %[2]s. It signs in whoever opens it first, so don't forward it or show it to anyone.",
		"📊 你的仪表盘：%[1]s\n链接只能用一次，%[2]s 前有效。谁先打开就登录谁，请勿转发或给别人看。"},
	"dash_off": {
		"The dashboard is off on this server: the agent hub serves it, and this server runs without its hub. Whoever runs it turns it on by serving the hub (<code>GPULEDGER_LISTEN</code>) at a public URL (<code>GPULEDGER_PUBLIC_URL</code>, https for the button inside Telegram): see docs/config.md.",
		"这台服务器没有开启仪表盘：仪表盘由代理服务（hub）提供，而这台服务器运行时没有启动它。运行它的人需开启 hub（<code>GPULEDGER_LISTEN</code>）并设置公网地址（<code>GPULEDGER_PUBLIC_URL</code>，在 Telegram 里打开需为 https）：见 docs/config.md。"},
	"dash_url_local": {
		"⚠️ This link points at %[1]s, which only the server's own machine can open: your phone cannot. To open the dashboard from Telegram, set <code>GPULEDGER_PUBLIC_URL</code> to an address your phone can reach and restart the server: your HTTPS domain behind a proxy, or a tunnel such as <code>cloudflared tunnel --url http://localhost:%[2]s</code> (its https address is the URL; an https URL also brings the button that opens the dashboard inside Telegram). On the server's machine the link works as it is. More in docs/deploy.md.",
		"⚠️ 这个链接指向 %[1]s，只有服务器本机能打开，你的手机打不开。要从 Telegram 打开仪表盘，请把 <code>GPULEDGER_PUBLIC_URL</code> 设为手机能访问的地址并重启服务器：放在反向代理后的 HTTPS 域名，或隧道，例如 <code>cloudflared tunnel --url http://localhost:%[2]s</code>（它给出的 https 地址就是 URL；https 地址还会带来在 Telegram 里打开仪表盘的按钮）。在服务器本机上，这个链接可以原样使用。详见 docs/deploy.md。"},
	"dash_url_private": {
		"⚠️ This link points at %[1]s, a private address: only devices on its private network can open it, so your phone can only while it is on that network (the same Wi-Fi, a VPN). To open it from anywhere, set <code>GPULEDGER_PUBLIC_URL</code> to a public address and restart the server: your HTTPS domain behind a proxy, or a tunnel such as <code>cloudflared tunnel --url http://localhost:%[2]s</code>. More in docs/deploy.md.",
		"⚠️ 这个链接指向 %[1]s，这是内网地址：只有同一内网的设备能打开，你的手机只有连在这个内网上（同一 Wi-Fi、VPN）时才能打开。要在任何地方打开，请把 <code>GPULEDGER_PUBLIC_URL</code> 设为公网地址并重启服务器：放在反向代理后的 HTTPS 域名，或隧道，例如 <code>cloudflared tunnel --url http://localhost:%[2]s</code>。详见 docs/deploy.md。"},
	"dash_no_app": {
		"There is no button that opens it inside Telegram: Telegram opens a Mini App only from an https address, and this server's is %[1]s. An https <code>GPULEDGER_PUBLIC_URL</code> (your domain behind a proxy, or a tunnel) brings that button here, under /status and /spend, and in the menu; the link works in a browser as it is.",
		"这里没有在 Telegram 里打开仪表盘的按钮：Telegram 只从 https 地址打开小程序，而这台服务器的地址是 %[1]s。把 <code>GPULEDGER_PUBLIC_URL</code> 设为 https 地址（反向代理后的域名或隧道）后，这里、/status 和 /spend 下面以及菜单里都会有这个按钮；链接本身在浏览器里可以直接打开。"},
	"dash_rate": {
		"✗ You asked for %[1]s dashboard links in the last %[2]s; try again at %[3]s (in %[4]s). An unused link still works until it expires.",
		"✗ 你在最近 %[2]s 内已要了 %[1]s 个仪表盘链接，请在 %[3]s（%[4]s后）再试。没用过的链接在过期前仍然有效。"},
}

// dt renders one of dashboardTexts in the user's language.
func (r reports) dt(key string, args ...any) string {
	return dashboardTexts.Render(r.lang, key, args...)
}

// linkLimiter counts the dashboard links each user was given in the last
// window. It is safe for concurrent use; it keeps at most
// DashboardLinksPerWindow times per user, and only allowed users reach
// it, so its memory is bounded by the allow list.
type linkLimiter struct {
	mu    sync.Mutex
	given map[int64][]time.Time
}

func newLinkLimiter() *linkLimiter { return &linkLimiter{given: make(map[int64][]time.Time)} }

// take records a link for user at now and returns true, or returns false
// and the moment the next link may be given.
func (l *linkLimiter) take(user int64, now time.Time) (retryAt time.Time, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var live []time.Time
	for _, t := range l.given[user] {
		if now.Sub(t) < dashboardLinkWindow {
			live = append(live, t)
		}
	}
	if len(live) >= DashboardLinksPerWindow {
		l.given[user] = live
		return live[0].Add(dashboardLinkWindow), false
	}
	l.given[user] = append(live, now)
	return time.Time{}, true
}

// giveBack undoes the take at now for user: that link never reached
// them, so it does not count.
func (l *linkLimiter) giveBack(user int64, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	g := l.given[user]
	if i := slices.Index(g, now); i >= 0 {
		l.given[user] = slices.Delete(g, i, i+1)
	}
}

// remote reports whether this update's replies are read on another
// device than the server: a Telegram chat, opened on a phone. The
// terminal console's updates carry no Key (chat.Update): its user reads
// the replies on the server's own machine, where a loopback link opens.
func (r reports) remote() bool { return r.u.Key != "" }

// linkNotes are what a dashboard link read on another device needs said
// (see remote): that the phone cannot open it, at a loopback or private
// address (urlReach), and, with no https Mini App, why no button opens it
// inside Telegram. "" in the terminal, or for an https link with its
// button.
func (r reports) linkNotes(link string) string {
	if !r.remote() {
		return ""
	}
	origin := link
	if u, err := url.Parse(link); err == nil && u.Host != "" {
		origin = u.Scheme + "://" + u.Host
	}
	var notes []string
	switch reach, port := urlReach(link); reach {
	case reachLocal:
		// Its text already says that an https URL brings the button.
		return r.dt("dash_url_local", origin, port)
	case reachPrivate:
		notes = append(notes, r.dt("dash_url_private", origin, port))
	}
	if r.c.dash.AppURL() == "" && r.toPrivate() && !r.inLines {
		notes = append(notes, r.dt("dash_no_app", origin))
	}
	return strings.Join(notes, "\n\n")
}

// toPrivate reports whether this update's replies land in a private chat:
// sent from one, or asked in a group and answered privately.
func (r reports) toPrivate() bool { return r.u.ChatType == chat.ChatPrivate || r.priv.on }

// appURL is the Mini App's URL for a web-app button on a reply to this
// update, or "" when there must be none: no dashboard, no https URL, a
// reply that lands in a group (Telegram refuses web-app buttons there),
// or a line of a multi-line message (its replies are merged into one
// answer, which a message with buttons would leave). On a team's ledger
// (a reply tagged "👥 NAME · ") it opens that team's page
// (chat.TeamAppURL), not the person's own month: the reply was about the
// team, and a person admitted to a team only has no month at all.
func (r reports) appURL() string {
	if r.c.dash == nil || !r.toPrivate() || r.inLines {
		return ""
	}
	if r.team != nil {
		return chat.TeamAppURL(r.c.dash.AppURL(), r.team.Team.ID)
	}
	return r.c.dash.AppURL()
}

// withDashboard adds the "Open dashboard" row to a reply that shows
// money, where it may have one (see appURL).
func (r reports) withDashboard(out chat.Outgoing) chat.Outgoing {
	out.Buttons = chat.WithRow(out.Buttons, chat.DashboardRow(r.lang, r.appURL()))
	return out
}

// dashboard answers /dashboard with a one-time sign-in link, when it
// expires and that it must not be forwarded; in a private chat with an
// https Mini App, also the button that opens it inside Telegram. Asked in
// a group, the answer goes to the private chat (group.go). The key is
// recorded before the link is made, so a redelivered update makes no
// second link unless the first answer may be lost.
func (r reports) dashboard(command.DashboardCmd) error {
	d := r.c.dash
	if d == nil {
		return r.answer(r.plain(r.dt("dash_off")))
	}
	if err := r.mark(); err != nil {
		if !r.u.Redelivered || ledger.ErrorCode(err) != ledger.EDUPLICATE {
			return err
		}
	}
	if at, ok := r.c.links.take(r.u.UserID, r.now); !ok {
		wait := (at.Sub(r.now) + time.Minute - 1).Truncate(time.Minute)
		return r.send(r.plain(r.dt("dash_rate", DashboardLinksPerWindow,
			chat.FormatDuration(dashboardLinkWindow, r.lang), r.when(at), chat.FormatDuration(wait, r.lang))))
	}
	link, expires, err := d.Link(r.ctx, r.u.UserID)
	if err != nil {
		r.c.links.giveBack(r.u.UserID, r.now)
		return fmt.Errorf("bot: make a dashboard link: %w", err)
	}
	// The button, where there is one, opens the Mini App signed by
	// Telegram; the link is for a browser. A transport without Mini Apps
	// (the console) drops the button, so the text does not mention it.
	text := r.dt("dash_link", link, r.when(expires))
	if n := r.linkNotes(link); n != "" {
		text += "\n\n" + n
	}
	err = r.send(r.withDashboard(r.plain(text)))
	if r.priv.closed {
		// Asked in a group by someone whose private chat is not open to
		// the bot: the link went nowhere. It is revoked and not counted,
		// so that their next /dashboard, once they have opened the chat,
		// is not refused for links they never got.
		if rv, ok := d.(LinkRevoker); ok {
			rv.Revoke(r.ctx, link)
		}
		r.c.links.giveBack(r.u.UserID, r.now)
	}
	return err
}
