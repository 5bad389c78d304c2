package traces

// Vocabulary the generator draws from: host names, paths, user agents and
// words, chosen to look like ordinary web and DNS traffic.

var words = []string{
	"about", "account", "action", "active", "address", "admin", "after", "again", "agent", "album",
	"alpha", "amount", "analysis", "answer", "api", "apple", "archive", "area", "article", "asset",
	"audio", "author", "auto", "avatar", "back", "banner", "basic", "batch", "before", "begin",
	"best", "beta", "block", "blog", "blue", "board", "body", "book", "border", "bottom",
	"brand", "bridge", "bright", "build", "bundle", "button", "cache", "calendar", "camera", "card",
	"cart", "case", "catalog", "center", "chart", "check", "child", "choice", "city", "class",
	"clear", "client", "close", "cloud", "code", "color", "column", "comment", "common", "config",
	"contact", "content", "control", "count", "country", "cover", "create", "credit", "custom", "daily",
	"data", "date", "day", "debug", "default", "delta", "design", "detail", "device", "dialog",
	"digital", "direct", "display", "document", "domain", "download", "draft", "drive", "early", "edge",
	"edit", "email", "empty", "energy", "engine", "entry", "error", "event", "example", "export",
	"family", "feature", "feed", "field", "file", "filter", "final", "first", "flag", "flow",
	"focus", "folder", "font", "footer", "form", "forum", "frame", "free", "front", "full",
	"gallery", "game", "garden", "general", "global", "green", "grid", "group", "guide", "header",
	"health", "help", "hidden", "history", "home", "host", "hotel", "house", "icon", "image",
	"index", "info", "input", "issue", "item", "journal", "key", "kind", "label", "language",
	"large", "last", "layout", "learn", "left", "level", "library", "light", "limit", "line",
	"link", "list", "local", "login", "logo", "main", "manager", "map", "market", "media",
	"member", "menu", "message", "meta", "method", "middle", "mobile", "mode", "model", "module",
	"month", "more", "motion", "music", "name", "native", "network", "news", "next", "node",
	"note", "notice", "number", "object", "offer", "office", "online", "open", "option", "order",
	"origin", "output", "owner", "package", "page", "panel", "paper", "parent", "part", "partner",
	"path", "pattern", "payment", "people", "photo", "picture", "place", "plan", "player", "plugin",
	"point", "policy", "popup", "portal", "post", "power", "premium", "preview", "price", "print",
	"privacy", "product", "profile", "program", "project", "promo", "public", "query", "queue", "quick",
	"radio", "range", "rate", "reader", "record", "region", "release", "report", "request", "resource",
	"result", "review", "right", "river", "route", "sale", "sample", "scale", "schema", "school",
	"screen", "script", "search", "section", "secure", "select", "server", "service", "session", "setting",
	"share", "shop", "short", "side", "sign", "simple", "site", "size", "slide", "small",
	"social", "source", "space", "special", "sport", "stack", "stage", "start", "state", "static",
	"status", "store", "story", "stream", "style", "summary", "support", "system", "table", "tag",
	"target", "team", "template", "term", "test", "text", "theme", "thread", "time", "title",
	"token", "tool", "top", "topic", "track", "travel", "tree", "trend", "type", "update",
	"upload", "user", "value", "vendor", "version", "video", "view", "visit", "voice", "watch",
	"weather", "week", "widget", "window", "winter", "word", "work", "world", "year", "zone",
}

// webHosts are the sites of HTTP sessions; each also resolves in DNS.
var webHosts = []string{
	"www.example.com", "example.com", "www.example.org", "example.net", "cdn.example.com",
	"static.example.net", "img.example.org", "api.example.com", "news.example.com", "shop.example.net",
	"blog.example.org", "media.example.com", "assets.example.org", "download.example.net", "update.example.com",
	"www.test-site.org", "portal.intranet.example", "wiki.example.org", "mail.example.com", "tracker.example.net",
	"ocsp.example-ca.com", "crl.example-ca.com", "connectivity-check.example.com", "mirror.example.edu", "files.example.edu",
}

// dnsZones are the second-level names DNS queries ask about.
var dnsZones = []string{
	"example.com", "example.org", "example.net", "example.edu", "test-site.org",
	"example-ca.com", "cloud-provider.example", "cdn-edge.net", "mail-hoster.com", "video-stream.tv",
	"social-app.io", "search-engine.com", "bank-online.de", "news-paper.co.uk", "gov-portal.gov",
}

// dnsLabels are first labels of queried names.
var dnsLabels = []string{
	"www", "api", "cdn", "mail", "smtp", "imap", "static", "img", "login", "auth",
	"app", "m", "docs", "blog", "shop", "status", "git", "vpn", "ns1", "ns2",
	"edge", "video", "assets", "update", "time", "chat", "push", "metrics", "track", "files",
}

var userAgents = []string{
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36",
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:123.0) Gecko/20100101 Firefox/123.0",
	"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.3.1 Safari/605.1.15",
	"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/121.0.0.0 Safari/537.36",
	"Mozilla/5.0 (iPhone; CPU iPhone OS 17_3_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.3 Mobile/15E148 Safari/604.1",
	"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.6261.64 Mobile Safari/537.36",
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36 Edg/122.0.2365.66",
	"curl/7.88.1",
	"Wget/1.21.3",
	"python-requests/2.31.0",
	"Go-http-client/1.1",
	"Debian APT-HTTP/1.3 (2.6.1)",
	"Microsoft-CryptoAPI/10.0",
	"okhttp/4.12.0",
}

var acceptLanguages = []string{
	"en-US,en;q=0.9", "en-GB,en;q=0.8", "de-DE,de;q=0.9,en;q=0.7", "fr-FR,fr;q=0.9", "es-ES,es;q=0.8,en;q=0.5",
}

var serverNames = []string{
	"nginx/1.24.0", "Apache/2.4.58 (Ubuntu)", "Apache", "cloudflare", "Microsoft-IIS/10.0",
	"gws", "lighttpd/1.4.69", "openresty", "Caddy", "AmazonS3",
}

var pathExts = []string{"", "", ".html", ".php", ".js", ".css", ".png", ".jpg", ".json", ".svg", ".woff2", ".gif"}

var reasonPhrases = map[int]string{
	100: "Continue", 200: "OK", 201: "Created", 204: "No Content", 206: "Partial Content",
	301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified", 307: "Temporary Redirect",
	308: "Permanent Redirect", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
	405: "Method Not Allowed", 409: "Conflict", 413: "Payload Too Large", 429: "Too Many Requests",
	500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
}
