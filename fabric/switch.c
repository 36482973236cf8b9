// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm-switch data path: a crossbar per switch, source routing on the
 * leading route byte, bounded per-output queues (a full one towards a node
 * drops, so a node that stops reading costs only its own frames; a full
 * in-process link holds back the inputs that feed it), fault injection on frames leaving a
 * port, pcap capture.  Everything runs on one glib main loop; event
 * handlers only mark ports as needing work and a work list does the
 * forwarding, so there is no recursion between ports.
 */
#define _GNU_SOURCE
#include "switch.h"
#include "netvm/mapper.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib-unix.h>


FabConfig fab_cfg = {
	.max_frame = 65536 + 64,
	.queue_frames = 512,
	.queue_bytes = 2 * 1024 * 1024,
	.stall_timeout_ms = 5000,
	.seed = 1,
	.mapper_node = -1,
};
Switch *fab_sw;
int fab_nsw;

#define W_DRAIN		1u
#define W_RESUME	2u
#define WRITE_BATCH	32
#define REORDER_FLUSH_MS 20
#define RETRY_MS	250

static GQueue worklist = G_QUEUE_INIT;
static guint work_src, stall_src;
static FILE *cap;

static void port_disconnect(Port *p);
static void port_connect_start(Port *p);

static int64_t now_us(void)
{
	return g_get_monotonic_time();
}

/* ---- PRNG: splitmix64, one stream per port so runs are reproducible ---- */

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double rng_unit(Port *p)
{
	return (double)(rng_next(&p->rng) >> 11) / (double)(1ull << 53);
}

/* ---- frames and queues ---- */

static Frame *frame_new(const uint8_t *data, uint32_t len)
{
	Frame *f = g_malloc(sizeof(*f) + len);

	f->next = NULL;
	f->release = 0;
	f->len = len;
	f->off = 0;
	memcpy(f->data, data, len);
	return f;
}

static Frame *frame_copy(const Frame *f)
{
	return frame_new(f->data + f->off, f->len);
}

static gboolean q_has_room(const Port *o)
{
	return o->qn < fab_cfg.queue_frames && o->qbytes < fab_cfg.queue_bytes;
}

static void q_push(Port *o, Frame *f)
{
	f->next = NULL;
	f->hdr[0] = f->len >> 24;
	f->hdr[1] = f->len >> 16;
	f->hdr[2] = f->len >> 8;
	f->hdr[3] = f->len;
	if (!o->qn)
		o->last_progress = now_us();
	if (o->qtail)
		o->qtail->next = f;
	else
		o->qhead = f;
	o->qtail = f;
	o->qn++;
	o->qbytes += f->len;
}

static Frame *q_pop(Port *o)
{
	Frame *f = o->qhead;

	if (!f)
		return NULL;
	o->qhead = f->next;
	if (!o->qhead)
		o->qtail = NULL;
	o->qn--;
	o->qbytes -= f->len;
	return f;
}

/* Drop queued frames, keeping a head that is partly written. */
static uint64_t q_flush(Port *o)
{
	Frame *keep = NULL, *f;
	uint64_t n = 0;

	if (o->wpos && o->qhead)
		keep = q_pop(o);
	while ((f = q_pop(o))) {
		g_free(f);
		n++;
	}
	if (keep)
		q_push(o, keep);
	else
		o->wpos = 0;
	if (o->reorder_slot) {
		g_free(o->reorder_slot);
		o->reorder_slot = NULL;
		n++;
	}
	return n;
}

/* ---- the work list ---- */

static void port_input_resume(Port *p);
static void port_drain(Port *o);

static gboolean work_run(gpointer data)
{
	(void)data;
	for (int i = 0; i < 512 && !g_queue_is_empty(&worklist); i++) {
		Port *p = g_queue_pop_head(&worklist);
		unsigned w = p->work;

		p->work = 0;
		p->queued = FALSE;
		if (w & W_RESUME)
			port_input_resume(p);
		if (w & W_DRAIN)
			port_drain(p);
	}
	if (g_queue_is_empty(&worklist)) {
		work_src = 0;
		return G_SOURCE_REMOVE;
	}
	return G_SOURCE_CONTINUE;
}

static void sched(Port *p, unsigned w)
{
	p->work |= w;
	if (!p->queued) {
		p->queued = TRUE;
		g_queue_push_tail(&worklist, p);
	}
	if (!work_src)
		work_src = g_idle_add_full(G_PRIORITY_DEFAULT, work_run, NULL, NULL);
}

static void wake_waiters(Port *o)
{
	uint32_t w = o->waiters;

	if (!w || !q_has_room(o))
		return;
	o->waiters = 0;
	for (int i = 0; i < o->sw->nports; i++)
		if (w & (1u << i))
			sched(&o->sw->port[i], W_RESUME);
}

/* ---- capture ---- */

static void capture_frame(Port *o, const Frame *f)
{
	int64_t t = g_get_real_time();
	uint32_t rec[4];
	uint8_t ph[4] = { (uint8_t)o->sw->idx, (uint8_t)o->idx, 0, 0 };

	if (!cap)
		return;
	rec[0] = (uint32_t)(t / 1000000);
	rec[1] = (uint32_t)(t % 1000000);
	rec[2] = rec[3] = f->len + sizeof(ph);
	fwrite(rec, sizeof(rec), 1, cap);
	fwrite(ph, sizeof(ph), 1, cap);
	fwrite(f->data + f->off, f->len, 1, cap);
}

gboolean fab_capture_start(const char *path, GError **err)
{
	struct {
		uint32_t magic;
		uint16_t major, minor;
		int32_t zone;
		uint32_t sigfigs, snaplen, linktype;
	} gh = { 0xa1b2c3d4, 2, 4, 0, 0, 0, 147 };
	FILE *f;

	gh.snaplen = fab_cfg.max_frame + 4;
	f = fopen(path, "wb");
	if (!f) {
		g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "cannot open %s: %s", path, g_strerror(errno));
		return FALSE;
	}
	fab_capture_stop();
	fwrite(&gh, sizeof(gh), 1, f);
	fflush(f);
	cap = f;
	return TRUE;
}

void fab_capture_stop(void)
{
	if (cap)
		fclose(cap);
	cap = NULL;
}

/* ---- faults ---- */

static void corrupt(Port *o, Frame *f)
{
	uint8_t *d = f->data + f->off;
	uint32_t h = 0, start, span;

	while (h < f->len && (d[h] & FAB_ROUTE_BYTE))
		h++;
	if (h >= f->len)
		return;
	/* payload if there is one, else the CRC trailer, else anything */
	if (f->len >= h + 8 + 4 + 1) {
		start = h + 8;
		span = f->len - h - 8 - 4;
	} else if (f->len >= h + 4 + 1) {
		start = f->len - 4;
		span = 4;
	} else {
		start = h;
		span = f->len - h;
	}
	d[start + rng_next(&o->rng) % span] ^= 1u << (rng_next(&o->rng) % 7);
}

static gboolean reorder_flush(gpointer data)
{
	Port *o = data;

	o->reorder_timer = 0;
	if (o->reorder_slot) {
		q_push(o, o->reorder_slot);
		o->reorder_slot = NULL;
		sched(o, W_DRAIN);
	}
	return G_SOURCE_REMOVE;
}

/* Enqueue a frame on an output, applying the port's faults. */
static void out_submit(Port *o, Frame *f)
{
	FabFaults *fa = &o->faults;
	Frame *dup = NULL;
	int64_t rel = fa->delay_ms ? now_us() + fa->delay_ms * 1000ll : 0;

	if (fa->drop > 0 && rng_unit(o) < fa->drop) {
		o->c.drop_injected++;
		g_free(f);
		return;
	}
	if (fa->corrupt > 0 && rng_unit(o) < fa->corrupt) {
		corrupt(o, f);
		o->c.corrupt_injected++;
	}
	if (fa->dup > 0 && rng_unit(o) < fa->dup) {
		dup = frame_copy(f);
		o->c.dup_injected++;
	}
	if (fa->reorder > 0 && !o->reorder_slot && rng_unit(o) < fa->reorder) {
		/* held back until the next frame for this port has gone */
		o->reorder_slot = f;
		o->c.reorder_injected++;
		o->reorder_timer = g_timeout_add(REORDER_FLUSH_MS + fa->delay_ms,
						 reorder_flush, o);
		f = NULL;
	}
	if (f) {
		f->release = rel;
		q_push(o, f);
	}
	if (dup) {
		dup->release = rel;
		q_push(o, dup);
	}
	if (f && o->reorder_slot) {
		o->reorder_slot->release = rel;
		q_push(o, o->reorder_slot);
		o->reorder_slot = NULL;
		if (o->reorder_timer)
			g_source_remove(o->reorder_timer);
		o->reorder_timer = 0;
	}
	sched(o, W_DRAIN);
}

/* ---- routing ---- */

static gboolean port_is_up(const Port *o)
{
	switch (o->kind) {
	case PK_INTERNAL:
		return TRUE;
	case PK_LISTEN:
	case PK_CONNECT:
		return o->fd >= 0 && !o->connecting;
	default:
		return FALSE;
	}
}

/* A mapper's probe for this switch: answered out of the input port.  The
 * answer is best effort, like any frame the mapper sends: with no room on
 * that port it is dropped, and the mapper asks again. */
static gboolean answer_probe(Port *in, Frame *f)
{
	Frame *r = fab_probe_reply(in->sw, in->idx, f->data + f->off + 1,
				   f->len - 1);

	g_free(f);
	if (!r) {
		in->c.drop_bad_probe++;
		return TRUE;
	}
	if (!port_is_up(in) || !q_has_room(in)) {
		in->c.drop_port_down++;
		g_free(r);
		return TRUE;
	}
	in->c.map_probes++;
	out_submit(in, r);
	return TRUE;
}

/* Forward an input frame.  FALSE: the output is an internal link and full,
 * the caller keeps the frame as its pending frame and stops reading (we are
 * on the waiters).  A full node or socket output drops the frame. */
static gboolean route(Port *in, Frame *f)
{
	Switch *sw = in->sw;
	uint8_t rb;
	Port *o;

	if (f->len < 2 || !((rb = f->data[f->off]) & FAB_ROUTE_BYTE)) {
		in->c.drop_bad_route++;
		g_free(f);
		return TRUE;
	}
	rb &= ~FAB_ROUTE_BYTE;
	if (rb == NVM_MAP_SWITCH_PORT)
		return answer_probe(in, f);	/* only ever back to @in */
	if (!fab_src_ok(in, f->data + f->off, f->len)) {
		in->c.drop_bad_src++;
		g_free(f);
		return TRUE;
	}
	if (!fab_mapper_ok(in, f->data + f->off, f->len)) {
		in->c.drop_not_mapper++;
		g_free(f);
		return TRUE;
	}
	if (rb >= sw->nports || sw->port[rb].kind == PK_NONE) {
		in->c.drop_no_port++;
		g_free(f);
		return TRUE;
	}
	o = &sw->port[rb];
	if (!port_is_up(o)) {
		in->c.drop_port_down++;
		g_free(f);
		return TRUE;
	}
	if (o->stalled) {
		gboolean blocked = o->kind == PK_INTERNAL ?
			o->peer->pending != NULL : o->write_blocked;

		if (blocked) {
			in->c.drop_stalled++;
			g_free(f);
			return TRUE;
		}
		o->stalled = FALSE;
	}
	if (!q_has_room(o) && o->kind != PK_INTERNAL) {
		/* A node that does not read (its QEMU stopped, its socket
		 * full, its link down) costs only the frames sent to it:
		 * holding this one would stop @in for every destination. */
		o->c.drop_queue_full++;
		g_free(f);
		return TRUE;
	}
	if (!q_has_room(o)) {
		/* an in-process link between switches: back-pressure, lossless */
		if (!(o->waiters & (1u << in->idx)))
			in->c.bp_stalls++;
		o->waiters |= 1u << in->idx;
		return FALSE;
	}
	f->off++;
	f->len--;
	out_submit(o, f);
	return TRUE;
}

int fab_inject(Port *p, const uint8_t *data, uint32_t len)
{
	Frame *f;

	if (p->kind != PK_LISTEN && p->kind != PK_CONNECT)
		return -EINVAL;
	if (!len || len > fab_cfg.max_frame)
		return -EINVAL;
	if (p->admin_down)
		return -ENETDOWN;
	if (p->pending)
		return -EBUSY;
	f = frame_new(data, len);
	p->c.rx_frames++;
	p->c.rx_bytes += len;
	p->c.injected++;
	if (!route(p, f)) {
		/* held like a frame read from the socket: stop reading */
		p->pending = f;
		if (p->rwatch)
			g_source_remove(p->rwatch);
		p->rwatch = 0;
	}
	return 0;
}

/* ---- input side of socket ports ---- */

static size_t rxbuf_size(void)
{
	return fab_cfg.max_frame + 4 + 65536;
}

static void rx_parse(Port *p)
{
	while (!p->pending && p->fd >= 0 && !p->admin_down) {
		size_t avail = p->rxend - p->rxstart;
		const uint8_t *b = p->rxbuf + p->rxstart;
		uint32_t len;
		Frame *f;

		if (avail < 4)
			break;
		len = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
		      (uint32_t)b[2] << 8 | b[3];
		if (len > fab_cfg.max_frame) {
			/* the stream cannot be trusted any more */
			p->c.drop_oversized++;
			port_disconnect(p);
			return;
		}
		if (len == 0) {
			p->c.drop_garbage_len++;
			p->rxstart += 4;
			continue;
		}
		if (avail < 4 + (size_t)len)
			break;
		f = frame_new(b + 4, len);
		p->rxstart += 4 + len;
		p->c.rx_frames++;
		p->c.rx_bytes += len;
		if (!route(p, f))
			p->pending = f;
	}
	if (p->rxstart == p->rxend) {
		p->rxstart = p->rxend = 0;
	} else if (p->rxstart > 0 && p->rxbuf) {
		memmove(p->rxbuf, p->rxbuf + p->rxstart, p->rxend - p->rxstart);
		p->rxend -= p->rxstart;
		p->rxstart = 0;
	}
}

static gboolean on_readable(gint fd, GIOCondition cond, gpointer data)
{
	Port *p = data;
	ssize_t n;

	(void)cond;
	if (p->fd != fd)
		return G_SOURCE_REMOVE;
	n = read(fd, p->rxbuf + p->rxend, rxbuf_size() - p->rxend);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		p->rwatch = 0;
		port_disconnect(p);
		return G_SOURCE_REMOVE;
	}
	if (n > 0)
		p->rxend += n;
	rx_parse(p);
	if (p->fd != fd)	/* disconnected while parsing */
		return G_SOURCE_REMOVE;
	if (p->pending || p->admin_down) {
		p->rwatch = 0;
		return G_SOURCE_REMOVE;
	}
	return G_SOURCE_CONTINUE;
}

static void port_input_resume(Port *p)
{
	if (p->admin_down)
		return;
	if (p->pending) {
		Frame *f = p->pending;

		p->pending = NULL;
		if (!route(p, f)) {
			p->pending = f;
			return;
		}
	}
	if (p->kind == PK_INTERNAL) {
		sched(p->peer, W_DRAIN);
		return;
	}
	if (p->fd < 0 || p->connecting)
		return;
	rx_parse(p);
	if (p->fd >= 0 && !p->pending && !p->rwatch)
		p->rwatch = g_unix_fd_add(p->fd, G_IO_IN | G_IO_HUP | G_IO_ERR,
					  on_readable, p);
}

/* ---- output side ---- */

static void frame_left(Port *o, Frame *f)
{
	o->c.tx_frames++;
	o->c.tx_bytes += f->len;
	capture_frame(o, f);
	o->last_progress = now_us();
	o->stalled = FALSE;
}

static gboolean delay_done(gpointer data)
{
	Port *o = data;

	o->delay_timer = 0;
	sched(o, W_DRAIN);
	return G_SOURCE_REMOVE;
}

static gboolean on_writable(gint fd, GIOCondition cond, gpointer data)
{
	Port *o = data;

	o->wwatch = 0;
	if (o->fd != fd)
		return G_SOURCE_REMOVE;
	if (cond & (G_IO_ERR | G_IO_HUP) && !(cond & G_IO_OUT)) {
		port_disconnect(o);
		return G_SOURCE_REMOVE;
	}
	o->write_blocked = FALSE;
	port_drain(o);
	return G_SOURCE_REMOVE;
}

static void drain_socket(Port *o, int64_t now)
{
	while (o->qhead) {
		struct iovec iov[2 * WRITE_BATCH];
		int niov = 0;
		uint32_t skip = o->wpos;
		ssize_t n;

		for (Frame *f = o->qhead; f && niov + 2 <= 2 * WRITE_BATCH &&
		     f->release <= now; f = f->next) {
			if (skip < 4) {
				iov[niov].iov_base = f->hdr + skip;
				iov[niov++].iov_len = 4 - skip;
				iov[niov].iov_base = f->data + f->off;
				iov[niov++].iov_len = f->len;
			} else {
				iov[niov].iov_base = f->data + f->off + skip - 4;
				iov[niov++].iov_len = f->len - (skip - 4);
			}
			skip = 0;
		}
		if (!niov)
			break;
		n = writev(o->fd, iov, niov);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				o->write_blocked = TRUE;
				o->wwatch = g_unix_fd_add(o->fd, G_IO_OUT | G_IO_ERR |
							  G_IO_HUP, on_writable, o);
				return;
			}
			port_disconnect(o);
			return;
		}
		while (n > 0) {
			Frame *f = o->qhead;
			size_t left = 4 + (size_t)f->len - o->wpos;

			if ((size_t)n >= left) {
				n -= left;
				o->wpos = 0;
				q_pop(o);
				frame_left(o, f);
				g_free(f);
			} else {
				o->wpos += n;
				n = 0;
			}
		}
	}
}

static void drain_internal(Port *o, int64_t now)
{
	Port *pe = o->peer;

	while (o->qhead && o->qhead->release <= now && !pe->pending) {
		Frame *f = q_pop(o);

		frame_left(o, f);
		pe->c.rx_frames++;
		pe->c.rx_bytes += f->len;
		if (!route(pe, f))
			pe->pending = f;
	}
}

static void port_drain(Port *o)
{
	int64_t now = now_us();

	if (o->admin_down || !port_is_up(o))
		return;
	if (o->kind == PK_INTERNAL)
		drain_internal(o, now);
	else if (!o->write_blocked)
		drain_socket(o, now);
	if (o->kind != PK_INTERNAL && o->fd < 0)
		return;		/* disconnected */
	if (o->qhead && o->qhead->release > now && !o->delay_timer)
		o->delay_timer = g_timeout_add(
			(guint)((o->qhead->release - now + 999) / 1000),
			delay_done, o);
	wake_waiters(o);
}

/* ---- connections ---- */

static void clear_waiter_bit(Port *p)
{
	for (int i = 0; i < p->sw->nports; i++)
		p->sw->port[i].waiters &= ~(1u << p->idx);
}

static void port_attach(Port *p, int fd)
{
	int one = 1;

	p->fd = fd;
	p->connecting = FALSE;
	p->write_blocked = FALSE;
	p->stalled = FALSE;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	p->c.connects++;
	p->last_progress = now_us();
	if (!p->rxbuf)
		p->rxbuf = g_malloc(rxbuf_size());
	p->rxstart = p->rxend = 0;
	sched(p, W_RESUME | W_DRAIN);
}

static gboolean retry_connect(gpointer data)
{
	Port *p = data;

	p->retry_timer = 0;
	port_connect_start(p);
	return G_SOURCE_REMOVE;
}

static void port_disconnect(Port *p)
{
	uint32_t w = p->waiters;

	if (p->rwatch)
		g_source_remove(p->rwatch);
	if (p->wwatch)
		g_source_remove(p->wwatch);
	p->rwatch = p->wwatch = 0;
	if (p->fd >= 0) {
		close(p->fd);
		if (!p->connecting)
			p->c.disconnects++;
	}
	p->fd = -1;
	p->connecting = p->write_blocked = p->stalled = FALSE;
	/* frames queued for a host that left are lost, as on a real link */
	p->wpos = 0;		/* nothing is partly written any more */
	p->c.drop_port_down += q_flush(p);
	if (p->reorder_timer)
		g_source_remove(p->reorder_timer);
	if (p->delay_timer)
		g_source_remove(p->delay_timer);
	p->reorder_timer = p->delay_timer = 0;
	p->rxstart = p->rxend = 0;
	if (p->pending) {
		g_free(p->pending);
		p->pending = NULL;
		p->c.drop_port_down++;
	}
	clear_waiter_bit(p);
	p->waiters = 0;
	for (int i = 0; i < p->sw->nports; i++)
		if (w & (1u << i))
			sched(&p->sw->port[i], W_RESUME);
	if (p->kind == PK_CONNECT && !p->retry_timer)
		p->retry_timer = g_timeout_add(RETRY_MS, retry_connect, p);
}

static gboolean on_accept(gint lfd, GIOCondition cond, gpointer data)
{
	Port *p = data;
	int fd;

	(void)cond;
	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return G_SOURCE_CONTINUE;
	if (p->fd >= 0) {
		/* one client per port */
		p->c.refused++;
		close(fd);
		return G_SOURCE_CONTINUE;
	}
	port_attach(p, fd);
	return G_SOURCE_CONTINUE;
}

/* addr: "unix:PATH", "tcp:HOST:PORT" or a bare path. */
static int make_sockaddr(const char *addr, struct sockaddr_storage *ss,
			 socklen_t *len, GError **err)
{
	memset(ss, 0, sizeof(*ss));
	if (g_str_has_prefix(addr, "tcp:")) {
		g_autofree char *host = g_strdup(addr + 4);
		char *colon = strrchr(host, ':');
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
		int r;

		if (!colon) {
			g_set_error(err, FAB_ERROR, 1,
				    "bad tcp address %s", addr);
			return -1;
		}
		*colon = 0;
		r = getaddrinfo(*host ? host : NULL, colon + 1, &hints, &ai);
		if (r) {
			g_set_error(err, FAB_ERROR, 1,
				    "%s: %s", addr, gai_strerror(r));
			return -1;
		}
		memcpy(ss, ai->ai_addr, ai->ai_addrlen);
		*len = ai->ai_addrlen;
		freeaddrinfo(ai);
		return ss->ss_family;
	} else {
		const char *path = g_str_has_prefix(addr, "unix:") ? addr + 5 : addr;
		struct sockaddr_un *un = (struct sockaddr_un *)ss;

		if (strlen(path) >= sizeof(un->sun_path) || !*path) {
			g_set_error(err, FAB_ERROR, 1,
				    "bad unix socket path %s", path);
			return -1;
		}
		un->sun_family = AF_UNIX;
		strcpy(un->sun_path, path);
		*len = sizeof(*un);
		return AF_UNIX;
	}
}

int fab_listen(const char *addr, char **unix_path, GError **err)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fam = make_sockaddr(addr, &ss, &len, err), fd, one = 1;

	if (fam < 0)
		return -1;
	fd = socket(fam, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	if (fam == AF_UNIX) {
		const char *path = ((struct sockaddr_un *)&ss)->sun_path;
		struct stat st;

		if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
			unlink(path);	/* stale socket from an earlier run */
		*unix_path = g_strdup(path);
	} else {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 4) < 0) {
		close(fd);
		if (fam == AF_UNIX) {
			g_free(*unix_path);
			*unix_path = NULL;
		}
		goto fail;
	}
	return fd;
fail:
	g_set_error(err, FAB_ERROR, errno,
		    "listen on %s: %s", addr, g_strerror(errno));
	return -1;
}

static gboolean on_connected(gint fd, GIOCondition cond, gpointer data)
{
	Port *p = data;
	int e = 0;
	socklen_t el = sizeof(e);

	(void)cond;
	p->wwatch = 0;
	if (p->fd != fd)
		return G_SOURCE_REMOVE;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e) {
		port_disconnect(p);
		return G_SOURCE_REMOVE;
	}
	port_attach(p, fd);
	return G_SOURCE_REMOVE;
}

static void port_connect_start(Port *p)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fam = make_sockaddr(p->addr, &ss, &len, NULL), fd;

	if (fam < 0 || p->fd >= 0)
		return;
	fd = socket(fam, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		p->retry_timer = g_timeout_add(RETRY_MS, retry_connect, p);
		return;
	}
	p->fd = fd;
	p->connecting = TRUE;
	if (connect(fd, (struct sockaddr *)&ss, len) == 0) {
		port_attach(p, fd);
	} else if (errno == EINPROGRESS) {
		p->wwatch = g_unix_fd_add(fd, G_IO_OUT | G_IO_ERR | G_IO_HUP,
					  on_connected, p);
	} else {
		port_disconnect(p);	/* closes and re-arms the retry */
	}
}

/* ---- stall policy ---- */

static gboolean stall_check(gpointer data)
{
	int64_t now = now_us(), limit = fab_cfg.stall_timeout_ms * 1000ll;

	(void)data;
	if (!limit)
		return G_SOURCE_CONTINUE;
	for (int s = 0; s < fab_nsw; s++) {
		for (int i = 0; i < fab_sw[s].nports; i++) {
			Port *o = &fab_sw[s].port[i];
			uint64_t n;

			if (!o->qhead || o->admin_down || o->qhead->release > now ||
			    now - o->last_progress < limit)
				continue;
			n = q_flush(o);
			o->c.drop_stalled += n;
			o->c.stall_timeouts++;
			o->stalled = TRUE;
			o->last_progress = now;
			wake_waiters(o);
		}
	}
	return G_SOURCE_CONTINUE;
}

/* ---- control helpers ---- */

Port *fab_find_port(const char *spec)
{
	const char *colon = strrchr(spec, ':');
	char *end;
	long v;
	Switch *sw = fab_nsw ? &fab_sw[0] : NULL;

	if (g_str_has_prefix(spec, "node")) {
		for (int s = 0; s < fab_nsw; s++)
			for (int i = 0; i < fab_sw[s].nports; i++)
				if (fab_sw[s].port[i].label &&
				    !strcmp(fab_sw[s].port[i].label, spec))
					return &fab_sw[s].port[i];
		return NULL;
	}
	if (colon) {
		g_autofree char *name = g_strndup(spec, colon - spec);

		sw = NULL;
		for (int s = 0; s < fab_nsw; s++)
			if (!strcmp(fab_sw[s].name, name))
				sw = &fab_sw[s];
		spec = colon + 1;
	}
	if (!sw || !*spec)
		return NULL;
	v = strtol(spec, &end, 10);
	if (*end || v < 0 || v >= sw->nports || !sw->local)
		return NULL;
	return &sw->port[v];
}

static void link_set_one(Port *p, gboolean up)
{
	if (!up) {
		p->admin_down = TRUE;
		if (p->rwatch)
			g_source_remove(p->rwatch);
		p->rwatch = 0;
	} else if (p->admin_down) {
		p->admin_down = FALSE;
		p->last_progress = now_us();
		sched(p, W_RESUME | W_DRAIN);
	}
}

void fab_link_set(Port *p, gboolean up)
{
	link_set_one(p, up);
	if (p->kind == PK_INTERNAL)
		link_set_one(p->peer, up);
}

void fab_faults_set(Port *p, const FabFaults *f)
{
	p->faults = *f;
	if (!f->reorder && p->reorder_slot) {
		if (p->reorder_timer)
			g_source_remove(p->reorder_timer);
		reorder_flush(p);	/* clears reorder_timer */
	}
	sched(p, W_DRAIN);
}

void fab_port_json(GString *s, Port *p)
{
	static const char *kinds[] = { "none", "listen", "connect", "internal" };
	const char *state;

	if (p->kind == PK_NONE)
		state = "unused";
	else if (p->admin_down)
		state = "down";
	else if (!port_is_up(p))
		state = "disconnected";
	else if (p->stalled)
		state = "stalled";
	else
		state = "up";
	g_string_append_printf(s, "{\"switch\": \"%s\", \"port\": %d, "
			       "\"kind\": \"%s\", \"label\": \"%s\", \"addr\": \"%s\", "
			       "\"node\": %d, \"state\": \"%s\", \"queue_frames\": %u, "
			       "\"queue_bytes\": %zu, \"blocked_input\": %s",
			       p->sw->name, p->idx, kinds[p->kind],
			       p->label ? p->label : "", p->addr ? p->addr : "", p->node,
			       state, p->qn, p->qbytes,
			       p->pending ? "true" : "false");
#define FAB_C_JSON(n) g_string_append_printf(s, ", \"" #n "\": %" G_GUINT64_FORMAT, \
					     (guint64)p->c.n);
	FAB_COUNTERS(FAB_C_JSON)
#undef FAB_C_JSON
	g_string_append_printf(s, ", \"faults\": {\"drop\": %g, \"dup\": %g, "
			       "\"reorder\": %g, \"corrupt\": %g, \"delay_ms\": %u}}",
			       p->faults.drop, p->faults.dup, p->faults.reorder,
			       p->faults.corrupt, p->faults.delay_ms);
}

/* ---- building the fabric from a topology ---- */

static char *default_addr(const char *fmt_unix, int id, GError **err)
{
	if (fab_cfg.tcp) {
		g_autofree char *host = g_strdup(fab_cfg.tcp);
		char *colon = strrchr(host, ':');
		long base;

		if (!colon || (base = strtol(colon + 1, NULL, 10)) <= 0 ||
		    base + id > 65535) {
			g_set_error(err, FAB_ERROR, 1,
				    "bad --tcp %s", fab_cfg.tcp);
			return NULL;
		}
		*colon = 0;
		return g_strdup_printf("tcp:%s:%ld", host, base + id);
	}
	if (!fab_cfg.sockdir) {
		g_set_error(err, FAB_ERROR, 1,
			    "no address: give --sock-dir or --tcp");
		return NULL;
	}
	{
		g_autofree char *name = g_strdup_printf(fmt_unix, id);

		return g_strdup_printf("unix:%s/%s", fab_cfg.sockdir, name);
	}
}

static gboolean setup_listen(Port *p, GError **err)
{
	p->lfd = fab_listen(p->addr, &p->unix_path, err);
	if (p->lfd < 0)
		return FALSE;
	p->lwatch = g_unix_fd_add(p->lfd, G_IO_IN, on_accept, p);
	return TRUE;
}

gboolean fab_build(const Topo *t, const char *only, GError **err)
{
	g_auto(GStrv) names = only ? g_strsplit(only, ",", -1) : NULL;

	fab_nsw = t->nswitches;
	fab_sw = g_new0(Switch, fab_nsw);
	for (int s = 0; s < fab_nsw; s++) {
		Switch *sw = &fab_sw[s];

		sw->name = g_strdup(t->sw[s].name);
		sw->idx = s;
		sw->nports = t->sw[s].nports;
		sw->local = !names || g_strv_contains((const char *const *)names,
						      sw->name);
		for (int i = 0; i < TOPO_MAX_PORTS; i++) {
			Port *p = &sw->port[i];

			p->sw = sw;
			p->idx = i;
			p->fd = p->lfd = -1;
			p->node = -1;
			p->rng = fab_cfg.seed ^ ((uint64_t)(s * 64 + i + 1) *
						 0x9e3779b97f4a7c15ull);
		}
	}
	if (names) {
		for (char **n = names; *n; n++)
			if (topo_find_switch(t, *n) < 0) {
				g_set_error(err, FAB_ERROR, 1,
					    "--only: no switch %s", *n);
				return FALSE;
			}
	}
	for (int s = 0; s < fab_nsw; s++) {
		Switch *sw = &fab_sw[s];

		if (!sw->local)
			continue;
		for (int i = 0; i < sw->nports; i++) {
			const TopoPort *tp = &t->sw[s].port[i];
			Port *p = &sw->port[i];

			switch (tp->use) {
			case TP_FREE:
				break;
			case TP_NODE: {
				const TopoNode *nd = &t->nodes[tp->idx];

				p->kind = PK_LISTEN;
				p->node = nd->id;
				p->label = g_strdup_printf("node%d", nd->id);
				p->addr = nd->addr ? g_strdup(nd->addr) :
					default_addr("node%d.sock", nd->id, err);
				if (!p->addr || !setup_listen(p, err))
					return FALSE;
				break;
			}
			case TP_LISTEN:
				p->kind = PK_LISTEN;
				p->label = g_strdup("listen");
				p->addr = g_strdup(tp->addr);
				if (!setup_listen(p, err))
					return FALSE;
				break;
			case TP_CONNECT:
				p->kind = PK_CONNECT;
				p->label = g_strdup("connect");
				p->addr = g_strdup(tp->addr);
				break;
			case TP_LINK: {
				const TopoLink *l = &t->links[tp->idx];
				int end = (l->sw[0] == s && l->port[0] == i) ? 0 : 1;
				int os = l->sw[!end], op = l->port[!end];

				p->label = g_strdup_printf("link %s:%d",
							   t->sw[os].name, op);
				if (fab_sw[os].local) {
					p->kind = PK_INTERNAL;
					p->peer = &fab_sw[os].port[op];
					break;
				}
				if (l->addr) {
					p->addr = g_strdup(l->addr);
				} else if (fab_cfg.sockdir) {
					p->addr = g_strdup_printf(
						"unix:%s/link-%s.%d-%s.%d.sock",
						fab_cfg.sockdir,
						t->sw[l->sw[0]].name, l->port[0],
						t->sw[l->sw[1]].name, l->port[1]);
				} else {
					g_set_error(err, FAB_ERROR,
						    1,
						    "link %s: needs an address or "
						    "--sock-dir", p->label);
					return FALSE;
				}
				if (end == 0) {
					p->kind = PK_LISTEN;
					if (!setup_listen(p, err))
						return FALSE;
				} else {
					p->kind = PK_CONNECT;
				}
				break;
			}
			}
		}
	}
	for (int s = 0; s < fab_nsw; s++)
		for (int i = 0; i < fab_sw[s].nports; i++)
			if (fab_sw[s].port[i].kind == PK_CONNECT)
				port_connect_start(&fab_sw[s].port[i]);
	stall_src = g_timeout_add(100, stall_check, NULL);
	return TRUE;
}

void fab_shutdown(void)
{
	fab_capture_stop();
	for (int s = 0; s < fab_nsw; s++) {
		for (int i = 0; i < fab_sw[s].nports; i++) {
			Port *p = &fab_sw[s].port[i];

			if (p->fd >= 0)
				close(p->fd);
			if (p->lfd >= 0)
				close(p->lfd);
			if (p->unix_path)
				unlink(p->unix_path);
		}
	}
}
