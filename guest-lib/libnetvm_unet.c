// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * libnetvm: U-Net message endpoints (docs/unet.md).
 *
 * Everything on the data path is loads and stores to the mapped queues:
 * a send is one descriptor in NIC memory plus a doorbell store; a receive
 * is a look at the next receive descriptor in host memory.  System calls
 * happen only to open, to set up channels and to sleep in poll(2).
 */
#define _GNU_SOURCE	/* F_SETSIG */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <netvm/unet_abi.h>

#include "netvm_priv.h"

#define UNET_RXQ_LEN		256
#define UNET_WAIT_MS		10000	/* for a descriptor or a tx slot */

struct netvm_unet {
	int fd;
	struct netvm_unet_open info;
	volatile uint8_t *sram;		/* the endpoint's 32 KiB region */
	volatile uint32_t *db;
	uint8_t *host;			/* receive queue, then the segment */
	uint8_t *seg;
	uint8_t *own_seg;		/* pageable: our mapping, else NULL */
	uint32_t rx_base;		/* first receive buffer */
	uint32_t issued;		/* send descriptors, free-running */
	uint32_t checked;		/* ... whose status was looked at */
	int err;			/* first error since the last flush */
	uint32_t rx_cons;
	uint32_t free_prod;
	uint32_t msgno;			/* the next message, in arrival order */
	uint32_t from;			/* sender of the last one taken:
					 * node | port << 16 */
	uint32_t div_done;		/* diverted ones taken */
	uint32_t div_lost;		/* ... dropped by the driver's bound */
	uint32_t peer_dropped;		/* receivers' DROPPED notices reported */
};

static volatile struct nvm_unet_send_desc *sdesc(struct netvm_unet *u,
						  uint32_t n)
{
	return (volatile struct nvm_unet_send_desc *)(u->sram + NVM_UNET_SENDQ +
		(n % NVM_UNET_SENDQ_LEN) * sizeof(struct nvm_unet_send_desc));
}

static volatile struct nvm_unet_ctl *ctl(struct netvm_unet *u)
{
	return (volatile struct nvm_unet_ctl *)(u->sram + NVM_UNET_CTL);
}

static volatile struct nvm_unet_status *status(struct netvm_unet *u)
{
	return (volatile struct nvm_unet_status *)(u->sram + NVM_UNET_STATUS);
}

static volatile struct nvm_unet_rx_desc *rdesc(struct netvm_unet *u,
					       uint32_t n)
{
	return (volatile struct nvm_unet_rx_desc *)(u->host +
		(n % UNET_RXQ_LEN) * sizeof(struct nvm_unet_rx_desc));
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void push_free(struct netvm_unet *u, uint32_t off)
{
	volatile uint32_t *q = (volatile uint32_t *)(u->sram + NVM_UNET_FREEQ);

	q[u->free_prod % NVM_UNET_FREEQ_LEN] = off;
	u->free_prod++;
}

static void publish_free(struct netvm_unet *u)
{
	__sync_synchronize();	/* the offsets before the count */
	ctl(u)->free_prod = u->free_prod;
}

NETVM_PUBLIC int netvm_unet_open(struct netvm *nv, size_t seg_size,
				 unsigned int buf_size, unsigned int rx_bufs,
				 struct netvm_unet **out)
{
	return netvm_unet_openx(nv, seg_size, buf_size, rx_bufs, 0, out);
}

NETVM_PUBLIC int netvm_unet_openx(struct netvm *nv, size_t seg_size,
				  unsigned int buf_size, unsigned int rx_bufs,
				  unsigned int flags, struct netvm_unet **out)
{
	struct netvm_unet *u;
	void *p;
	int err;

	if (!nv || !out || !rx_bufs || rx_bufs >= NVM_UNET_FREEQ_LEN ||
	    seg_size > NVM_UNET_SEG_MAX || (seg_size & 4095) ||
	    seg_size < NETVM_UNET_TX_AREA + (size_t)rx_bufs * buf_size ||
	    (flags & ~NETVM_UNET_OPEN_PAGEABLE))
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->fd = open(nv->path, O_RDWR | O_CLOEXEC);
	if (u->fd < 0) {
		err = -errno;
		free(u);
		return err;
	}
	u->info.seg_size = (uint32_t)seg_size;
	u->info.buf_size = buf_size;
	u->info.rxq_len = UNET_RXQ_LEN;
	if (flags & NETVM_UNET_OPEN_PAGEABLE) {
		/* our own memory: the kernel follows it, pins nothing */
		p = mmap(NULL, seg_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			goto fail_errno;
		u->own_seg = p;
		/*
		 * A child cannot use the endpoint (the driver refuses other
		 * processes), so it need not share the segment copy-on-write:
		 * fork then leaves our translations alone, as ibverbs does.
		 */
		if (madvise(p, seg_size, MADV_DONTFORK))
			goto fail_errno;
		u->info.flags = NETVM_UNET_PAGEABLE;
		u->info.seg_va = (uintptr_t)p;
	} else if (getenv("NETVM_UNET_EMULATE")) {
		/* testing hook: ask for a kernel-emulated endpoint */
		u->info.flags = NETVM_UNET_EMULATE;
	}
	if (ioctl(u->fd, NETVM_IOC_UNET_OPEN, &u->info) < 0)
		goto fail_errno;
	p = mmap(NULL, NVM_EP_STRIDE, PROT_READ | PROT_WRITE, MAP_SHARED, u->fd,
		 NETVM_EP_MMAP_SRAM);
	if (p == MAP_FAILED)
		goto fail_errno;
	u->sram = p;
	/* readable for netvm_unet_yield */
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, u->fd,
		 NETVM_EP_MMAP_DB);
	if (p == MAP_FAILED)
		goto fail_errno;
	u->db = p;
	p = mmap(NULL, u->info.host_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 u->fd, NETVM_EP_MMAP_HOST);
	if (p == MAP_FAILED)
		goto fail_errno;
	u->host = p;
	u->seg = u->own_seg ? u->own_seg : u->host + u->info.seg_off;
	u->rx_base = (uint32_t)seg_size - rx_bufs * buf_size;
	for (unsigned int i = 0; i < rx_bufs; i++)
		push_free(u, u->rx_base + i * buf_size);
	publish_free(u);
	*out = u;
	return 0;
fail_errno:
	err = -errno;
	netvm_unet_close(u);
	return err;
}

NETVM_PUBLIC int netvm_unet_close(struct netvm_unet *u)
{
	if (!u)
		return 0;
	if (u->sram)
		munmap((void *)u->sram, NVM_EP_STRIDE);
	if (u->db)
		munmap((void *)u->db, 4096);
	if (u->host)
		munmap(u->host, u->info.host_size);
	close(u->fd);	/* the driver closes the endpoint */
	if (u->own_seg)	/* after: the NI no longer reaches it */
		munmap(u->own_seg, u->info.seg_size);
	free(u);
	return 0;
}

NETVM_PUBLIC int netvm_unet_fd(const struct netvm_unet *u)
{
	return u ? u->fd : -EINVAL;
}

NETVM_PUBLIC void netvm_unet_yield(struct netvm_unet *u)
{
	if (u && !(u->info.flags & NETVM_UNET_EMULATED))
		(void)u->db[LANAI_DB_YIELD / sizeof(*u->db)];
}

NETVM_PUBLIC int netvm_unet_port(const struct netvm_unet *u)
{
	return u ? (int)u->info.port : -EINVAL;
}

NETVM_PUBLIC int netvm_unet_emulated(const struct netvm_unet *u)
{
	return u ? !!(u->info.flags & NETVM_UNET_EMULATED) : -EINVAL;
}

NETVM_PUBLIC void *netvm_unet_segment(struct netvm_unet *u, size_t *size,
				      size_t *app_end)
{
	if (!u)
		return NULL;
	if (size)
		*size = u->info.seg_size;
	if (app_end)
		*app_end = u->rx_base;
	return u->seg;
}

NETVM_PUBLIC int netvm_unet_channel(struct netvm_unet *u, unsigned int node,
				    unsigned int port, uint32_t tag)
{
	struct netvm_unet_chan c = { .node = node, .port = port, .tag = tag };

	if (!u)
		return -EINVAL;
	if (ioctl(u->fd, NETVM_IOC_UNET_CHANNEL, &c) < 0)
		return -errno;
	return (int)c.channel;
}

NETVM_PUBLIC int netvm_unet_unchannel(struct netvm_unet *u, int channel)
{
	struct netvm_unet_chan c = { .channel = (uint32_t)channel };

	if (!u || channel < 0)
		return -EINVAL;
	if (ioctl(u->fd, NETVM_IOC_UNET_UNCHANNEL, &c) < 0)
		return -errno;
	return 0;
}

/* ---- send ---- */

static int st_errno(uint8_t st)
{
	switch (st) {
	case NVM_UNET_ST_SENT:
		return 0;
	case NVM_UNET_ST_BAD_CHANNEL:
		return -ENOTCONN;
	case NVM_UNET_ST_BAD_RANGE:
		return -ERANGE;
	case NVM_UNET_ST_BAD_LEN:
		return -EMSGSIZE;
	case NVM_UNET_ST_BAD_FLAGS:
		return -EINVAL;
	case NVM_UNET_ST_FAULT:
		return -EFAULT;
	case NVM_UNET_ST_UNREACHABLE:
		return -EHOSTUNREACH;
	default:
		return -EIO;
	}
}

/* Look at the verdicts of descriptors the NI has taken, up to @upto. */
static void collect(struct netvm_unet *u, uint32_t upto)
{
	for (; u->checked != upto; u->checked++) {
		int e = st_errno(sdesc(u, u->checked)->status);

		if (e && !u->err)
			u->err = e;
	}
}

/*
 * Wait until fewer than @max descriptors are outstanding; @timeout_ms < 0:
 * not at all (-EAGAIN).  While a receiver holds the endpoint's next send
 * (overflow control), the wait is flow control, not a failure: it lasts
 * as long as the hold and sleeps rather than spins.
 */
static int wait_consumed(struct netvm_unet *u, uint32_t max, int timeout_ms)
{
	uint64_t end = now_ms() + (uint64_t)timeout_ms;
	unsigned int spins = 0;

	for (;;) {
		uint32_t c = status(u)->send_consumed;

		if (u->issued - c < max || (max == 0 && c == u->issued)) {
			__sync_synchronize();
			collect(u, c);
			return 0;
		}
		if (timeout_ms < 0)
			return -EAGAIN;
		if (++spins > 1000) {
			if (status(u)->tx_held_now) {
				end = now_ms() + (uint64_t)timeout_ms;
				usleep(500);
				continue;
			}
			if (now_ms() > end)
				return -ETIMEDOUT;
			sched_yield();
		}
	}
}

/* @data: INLINE's bytes or GATHER's list (whole words: NIC memory) */
/* @wait_ms: for a free descriptor, as wait_consumed() */
static int post_ex(struct netvm_unet *u, int channel, uint8_t flags,
		   uint32_t off, const void *data, uint32_t len,
		   uint32_t dlen, uint16_t reply, int wait_ms)
{
	volatile struct nvm_unet_send_desc *d;
	int err;

	if (channel < 0 || channel >= NVM_UNET_CHANNELS)
		return -EINVAL;
	err = wait_consumed(u, NVM_UNET_SENDQ_LEN, wait_ms);
	if (err)
		return err;
	d = sdesc(u, u->issued);
	d->channel = (uint16_t)channel;
	d->flags = flags;
	d->status = NVM_UNET_ST_PENDING;
	d->len = len;
	d->offset = off;
	/* reply and reserved (0) as one word */
	*(volatile uint32_t *)((volatile uint8_t *)d +
		offsetof(struct nvm_unet_send_desc, reply)) = reply;
	if (data) {
		uint8_t tmp[NVM_UNET_INLINE_MAX] = { 0 };

		/* whole words: the NIC memory takes them best */
		memcpy(tmp, data, dlen);
		for (uint32_t i = 0; i < dlen; i += 4) {
			uint32_t w;

			memcpy(&w, tmp + i, 4);
			*(volatile uint32_t *)(d->data + i) = w;
		}
	}
	__sync_synchronize();	/* the descriptor before its seq */
	d->seq = u->issued + 1;
	u->issued++;
	__sync_synchronize();
	*u->db = u->issued;
	/* an emulated endpoint's NI is the driver: a store does not reach it */
	if ((u->info.flags & NETVM_UNET_EMULATED) &&
	    ioctl(u->fd, NETVM_IOC_UNET_KICK) < 0)
		return -errno;
	return 0;
}

static int post(struct netvm_unet *u, int channel, uint8_t flags,
		uint32_t off, const void *data, uint32_t len)
{
	return post_ex(u, channel, flags, off, data, len, data ? len : 0, 0,
		       UNET_WAIT_MS);
}

NETVM_PUBLIC int netvm_unet_send(struct netvm_unet *u, int channel,
				 const void *buf, size_t len)
{
	return netvm_unet_sendx(u, channel, buf, len, 0, 0);
}

NETVM_PUBLIC int netvm_unet_send_seg(struct netvm_unet *u, int channel,
				     uint32_t off, uint32_t len)
{
	if (!u)
		return -EINVAL;
	/* deliberately unchecked here: the NI refuses what is outside */
	return post(u, channel, 0, off, NULL, len);
}

NETVM_PUBLIC int netvm_unet_flush(struct netvm_unet *u, int timeout_ms)
{
	int err;

	if (!u)
		return -EINVAL;
	err = wait_consumed(u, 0, timeout_ms < 0 ? 3600000 : timeout_ms);
	if (err)
		return err;
	err = u->err;
	u->err = 0;
	if (!err && status(u)->peer_dropped != u->peer_dropped) {
		/* a receiver without a divert ring dropped some of ours */
		u->peer_dropped = status(u)->peer_dropped;
		err = -ENOBUFS;
	}
	return err;
}

/* ---- receive ---- */

/*
 * The oldest diverted message (FUGU's buffered path) if it is the next one
 * in order.  The driver holds them; the NI numbers every message, direct
 * or diverted, so the two sources merge by msgno.  A system call happens
 * only while the NI reports diverted messages not yet taken.
 *
 * The queue is looked at after the driver's answer, not before: the NI
 * writes a message's descriptor before it diverts a later one, so every
 * queued message older than the FIFO's head is seen then.  A look from
 * before could miss a queue the NI filled meanwhile (the free buffers then
 * running out, the next one diverted) and take the diverted one as if
 * overflow control had dropped those in between: out of order.
 */
static int take_diverted(struct netvm_unet *u, void *buf, size_t cap,
			 struct netvm_unet_msg *m,
			 volatile struct nvm_unet_rx_desc *d, int *ring_ok)
{
	struct netvm_unet_drecv r;
	uint32_t inflight, next, ring_msgno = 0;

	/* the queue was looked at first: a later direct message there means
	 * the NI's count already has every diverted one before it */
	if (status(u)->diverted == u->div_done + u->div_lost)
		return 1;	/* none: the ring decides */
	memset(&r, 0, sizeof(r));
	r.flags = NETVM_UNET_PEEK;
	if (ioctl(u->fd, NETVM_IOC_UNET_DRECV, &r) < 0 && errno != EAGAIN)
		return -errno;
	__sync_synchronize();	/* the driver's answer, then the queue */
	*ring_ok = d->seq == u->rx_cons + 1;
	if (*ring_ok) {
		__sync_synchronize();	/* the seq before the rest */
		ring_msgno = d->msgno;
	}
	/* what the NI diverted but the driver has not buffered yet */
	u->div_lost = r.overflow;
	inflight = status(u)->diverted - u->div_done - u->div_lost -
		   r.buffered;
	if (r.buffered && r.msgno == u->msgno)
		next = r.msgno;
	else if (*ring_ok && ring_msgno == u->msgno)
		return 1;
	else if (inflight)
		return -EAGAIN;	/* the next one may still be on its way */
	else if (r.buffered && (!*ring_ok || r.msgno - u->msgno <
				 ring_msgno - u->msgno))
		next = r.msgno;	/* a gap: overflow control dropped some */
	else
		return *ring_ok ? 1 : -EAGAIN;
	memset(&r, 0, sizeof(r));
	r.buf = (uintptr_t)buf;
	r.cap = (uint32_t)(cap < NVM_UNET_MSG_MAX ? cap : NVM_UNET_MSG_MAX);
	r.want = next;
	if (ioctl(u->fd, NETVM_IOC_UNET_DRECV, &r) < 0) {
		if (errno == EMSGSIZE)
			m->len = r.len;
		return -errno;
	}
	m->len = r.len;
	m->channel = r.channel;
	/* the DSM flags kept by the driver (never a HIT: order first) */
	m->flags = (r.dsm & NVM_UNET_F_NOINTR ? NETVM_UNET_NOINTR : 0) |
		   (r.dsm & NVM_UNET_F_REPLY ? NETVM_UNET_REPLY : 0);
	m->reply = r.dsm & NVM_UNET_F_REPLY ? r.dsm >> 16 : 0;
	u->from = r.src;
	u->div_done++;
	u->msgno = next + 1;
	return 0;
}

/*
 * The next message into @m (and @buf).  A reply that hit its reply buffer
 * is already in the segment: copied to @buf only if @copy_hit.
 */
static int take(struct netvm_unet *u, void *buf, size_t cap,
		struct netvm_unet_msg *m, int copy_hit)
{
	volatile struct nvm_unet_rx_desc *d = rdesc(u, u->rx_cons);
	uint32_t n, nbuf, fl, bs = u->info.buf_size;
	int ok = d->seq == u->rx_cons + 1, err;

	if (ok)
		__sync_synchronize();	/* the seq before the rest */
	memset(m, 0, sizeof(*m));
	/* may look at the queue again (ok then says what it saw) */
	err = take_diverted(u, buf, cap, m, d, &ok);
	if (err <= 0)
		return err;
	if (!ok)
		return -EAGAIN;
	u->msgno = d->msgno + 1;
	n = d->len;
	nbuf = d->nbuf;
	fl = d->flags;
	m->len = n;
	if (n > cap && (copy_hit || !(fl & NVM_UNET_F_HIT)))
		return -EMSGSIZE;
	m->channel = d->channel;
	u->from = d->src_node | (uint32_t)d->src_port << 16;
	m->flags = (fl & NVM_UNET_F_NOINTR ? NETVM_UNET_NOINTR : 0) |
		   (fl & NVM_UNET_F_REPLY ? NETVM_UNET_REPLY : 0) |
		   (fl & NVM_UNET_F_HIT ? NETVM_UNET_HIT : 0);
	if (fl & NVM_UNET_F_REPLY)
		m->reply = d->reply;
	if (fl & NVM_UNET_F_HIT) {
		uint32_t o = d->buf[0];

		if (o > u->info.seg_size || u->info.seg_size - o < n)
			return -EIO;	/* cannot happen: the NI checked */
		m->seg_off = o;
		if (copy_hit)
			memcpy(buf, u->seg + o, n);
	} else if (fl & NVM_UNET_F_INLINE) {
		memcpy(buf, (const void *)d->data,
		       n <= NVM_UNET_INLINE_MAX ? n : NVM_UNET_INLINE_MAX);
	} else {
		for (uint32_t i = 0; i < nbuf && i < NVM_UNET_RX_BUFS; i++) {
			uint32_t o = d->buf[i], k = n - i * bs;

			if (o > u->info.seg_size - bs)
				return -EIO;	/* cannot happen: the NI checked */
			memcpy((uint8_t *)buf + i * bs, u->seg + o,
			       k < bs ? k : bs);
			push_free(u, o);
		}
		publish_free(u);
	}
	u->rx_cons++;
	ctl(u)->rx_cons = u->rx_cons;
	/* before the next look at the queue: the NI reads rx_cons after
	 * writing a descriptor, for the upcall edge (see fw_unet.c) */
	__sync_synchronize();
	return 0;
}

static int recv_common(struct netvm_unet *u, void *buf, size_t cap,
		       struct netvm_unet_msg *m, int copy_hit, int timeout_ms)
{
	uint64_t end = timeout_ms > 0 ? now_ms() + (uint64_t)timeout_ms : 0;
	struct pollfd pfd;
	int err, wait;

	if (!u || (!buf && cap))
		return -EINVAL;
	for (;;) {
		err = take(u, buf, cap, m, copy_hit);
		if (err != -EAGAIN || timeout_ms == 0)
			return err;
		/* arm for the next message, then look again: one that came in
		 * between is seen now, a later one raises the event */
		ctl(u)->arm = u->rx_cons + 1 ? u->rx_cons + 1 : 1;
		__sync_synchronize();
		err = take(u, buf, cap, m, copy_hit);
		if (err != -EAGAIN)
			return err;
		wait = -1;
		if (timeout_ms > 0) {
			uint64_t t = now_ms();

			if (t >= end)
				return -ETIMEDOUT;
			wait = (int)(end - t);
		}
		pfd.fd = u->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, wait) < 0 && errno == EINTR)
			return -EINTR;
	}
}

NETVM_PUBLIC int netvm_unet_recv(struct netvm_unet *u, void *buf, size_t cap,
				 size_t *len, unsigned int *channel,
				 int timeout_ms)
{
	struct netvm_unet_msg m;
	int err = recv_common(u, buf, cap, &m, 1, timeout_ms);

	if ((!err || err == -EMSGSIZE) && len)
		*len = m.len;
	if (!err && channel)
		*channel = m.channel;
	return err;
}

NETVM_PUBLIC int netvm_unet_arm(struct netvm_unet *u)
{
	if (!u)
		return -EINVAL;
	/* as recv_common: arm, then look, so nothing falls in between */
	ctl(u)->arm = u->rx_cons + 1 ? u->rx_cons + 1 : 1;
	__sync_synchronize();
	return rdesc(u, u->rx_cons)->seq == u->rx_cons + 1 ||
	       status(u)->diverted != u->div_done + u->div_lost;
}

NETVM_PUBLIC int netvm_unet_recvfrom(struct netvm_unet *u, void *buf,
				     size_t cap, size_t *len,
				     unsigned int *channel, unsigned int *node,
				     unsigned int *port, int timeout_ms)
{
	struct netvm_unet_msg m;
	int err = recv_common(u, buf, cap, &m, 1, timeout_ms);

	if ((!err || err == -EMSGSIZE) && len)
		*len = m.len;
	if (err)
		return err;
	if (channel)
		*channel = m.channel;
	if (node)
		*node = u->from & 0xffff;
	if (port)
		*port = u->from >> 16;
	return 0;
}

NETVM_PUBLIC int netvm_unet_recvmsg(struct netvm_unet *u, void *buf,
				    size_t cap, struct netvm_unet_msg *m,
				    int timeout_ms)
{
	if (!m)
		return -EINVAL;
	return recv_common(u, buf, cap, m, 0, timeout_ms);
}

NETVM_PUBLIC int netvm_unet_stats(struct netvm_unet *u,
				  struct netvm_unet_stats *st)
{
	if (!u || !st)
		return -EINVAL;
	st->sent = status(u)->send_consumed;
	st->send_errors = status(u)->send_errors;
	st->received = status(u)->rx_prod;
	st->rx_ring_full = status(u)->rx_ring_full;
	st->rx_no_buf = status(u)->rx_no_buf;
	st->div_order = status(u)->div_order;
	st->diverted = status(u)->diverted;
	st->dropped = status(u)->dropped;
	return 0;
}

/* ---- upcalls ---- */

NETVM_PUBLIC int netvm_unet_upcall_setup(struct netvm_unet *u, int signo,
					 unsigned int almost_full)
{
	int fl;

	if (!u || signo <= 0 || almost_full >= UNET_RXQ_LEN)
		return -EINVAL;
	if (fcntl(u->fd, F_SETOWN, getpid()) < 0 ||
	    fcntl(u->fd, F_SETSIG, signo) < 0)
		return -errno;
	fl = fcntl(u->fd, F_GETFL);
	if (fl < 0 || fcntl(u->fd, F_SETFL, fl | O_ASYNC) < 0)
		return -errno;
	ctl(u)->upcall_full = almost_full;
	return netvm_unet_upcalls(u, 1);
}

NETVM_PUBLIC int netvm_unet_upcalls(struct netvm_unet *u, int on)
{
	if (!u)
		return -EINVAL;
	ctl(u)->upcall = on ? 1 : 0;
	if (!on)
		return 0;
	__sync_synchronize();	/* on, then look: nothing falls in between */
	return rdesc(u, u->rx_cons)->seq == u->rx_cons + 1 ||
	       status(u)->diverted != u->div_done + u->div_lost;
}

/* ---- DSM extensions (docs/dsm.md) ---- */

static int dsm_flags(unsigned int flags,
		     unsigned int reply, uint8_t *out)
{
	if (flags & ~(NETVM_UNET_NOINTR | NETVM_UNET_REPLY |
		      NETVM_UNET_DONTWAIT) ||
	    ((flags & NETVM_UNET_REPLY) && reply >= NETVM_UNET_REPLY_SLOTS))
		return -EINVAL;
	*out = (flags & NETVM_UNET_NOINTR ? NVM_UNET_F_NOINTR : 0) |
	       (flags & NETVM_UNET_REPLY ? NVM_UNET_F_REPLY : 0);
	return 0;
}

NETVM_PUBLIC int netvm_unet_sendx(struct netvm_unet *u, int channel,
				  const void *buf, size_t len,
				  unsigned int flags, unsigned int reply)
{
	int wait = flags & NETVM_UNET_DONTWAIT ? -1 : UNET_WAIT_MS;
	uint32_t off;
	uint8_t f;
	int err;

	if (!u || !buf || !len)
		return -EINVAL;
	err = dsm_flags(flags, reply, &f);
	if (err)
		return err;
	if (len > NETVM_UNET_MSG_MAX)
		return -EMSGSIZE;
	if (len <= NVM_UNET_INLINE_MAX)
		return post_ex(u, channel, f | NVM_UNET_F_INLINE, 0, buf,
			       (uint32_t)len, (uint32_t)len, (uint16_t)reply,
			       wait);
	err = wait_consumed(u, NETVM_UNET_TX_SLOTS, wait);
	if (err)
		return err;
	off = (u->issued % NETVM_UNET_TX_SLOTS) * NETVM_UNET_MSG_MAX;
	memcpy(u->seg + off, buf, len);
	return post_ex(u, channel, f, off, NULL, (uint32_t)len, 0,
		       (uint16_t)reply, wait);
}

NETVM_PUBLIC int netvm_unet_sendv(struct netvm_unet *u, int channel,
				  const struct netvm_unet_piece *pv,
				  unsigned int n, unsigned int flags,
				  unsigned int reply)
{
	struct nvm_unet_gather g = { .count = n };
	uint64_t sum = 0;
	uint8_t f;
	int err, wait;

	if (!u || !pv || !n || n > NETVM_UNET_GATHER_MAX)
		return -EINVAL;
	err = dsm_flags(flags, reply, &f);
	if (err)
		return err;
	for (unsigned int i = 0; i < n; i++) {
		g.piece[i].offset = pv[i].off;
		g.piece[i].len = pv[i].len;
		sum += pv[i].len;
	}
	if (sum > UINT32_MAX)
		return -EMSGSIZE;
	/* the pieces are deliberately unchecked here: the NI checks each */
	wait = flags & NETVM_UNET_DONTWAIT ? -1 : UNET_WAIT_MS;
	if (n == 1)
		return post_ex(u, channel, f, pv[0].off, NULL, pv[0].len, 0,
			       (uint16_t)reply, wait);
	return post_ex(u, channel, f | NVM_UNET_F_GATHER, 0, &g,
		       (uint32_t)sum, sizeof(g), (uint16_t)reply, wait);
}

static volatile uint32_t *reply_ent(struct netvm_unet *u, unsigned int num)
{
	return (volatile uint32_t *)(u->sram + NVM_UNET_REPLYTAB +
		num * sizeof(struct nvm_unet_reply_ent));
}

/* Word 2 of an entry: channel (low half), armed (high half). */
#define REPLY_W2(ch, armed)	((uint32_t)(ch) | (uint32_t)(armed) << 16)

NETVM_PUBLIC int netvm_unet_reply_arm(struct netvm_unet *u, unsigned int num,
				      int channel, uint32_t off, uint32_t len)
{
	volatile uint32_t *e;

	if (!u || num >= NETVM_UNET_REPLY_SLOTS || channel < 0 ||
	    channel >= NVM_UNET_CHANNELS)
		return -EINVAL;
	e = reply_ent(u, num);
	/* deliberately unchecked: the NI checks the range at each use */
	e[0] = off;
	e[1] = len;
	__sync_synchronize();	/* the buffer before armed */
	e[2] = REPLY_W2(channel, 1);
	__sync_synchronize();	/* armed before the request goes out */
	return 0;
}

NETVM_PUBLIC int netvm_unet_reply_disarm(struct netvm_unet *u,
					 unsigned int num)
{
	volatile uint32_t *e;
	uint32_t w;

	if (!u || num >= NETVM_UNET_REPLY_SLOTS)
		return -EINVAL;
	e = reply_ent(u, num);
	w = e[2];
	e[2] = w & 0xffff;
	__sync_synchronize();
	return (int)(w >> 16 == 1);
}

NETVM_PUBLIC int netvm_unet_sched(struct netvm_unet *u, int on)
{
	uint32_t v = !!on;

	if (!u)
		return -EINVAL;
	if (ioctl(u->fd, NETVM_IOC_UNET_SCHED, &v) < 0)
		return -errno;
	return 0;
}

NETVM_PUBLIC int netvm_unet_fugu_stats(struct netvm_unet *u,
				       struct netvm_unet_fugu_stats *st)
{
	volatile struct nvm_unet_status *s;

	if (!u || !st)
		return -EINVAL;
	s = status(u);
	st->direct = s->rx_prod;
	st->diverted = s->diverted;
	st->ring_full = s->rx_ring_full;
	st->no_buf = s->rx_no_buf;
	st->not_resident = s->rx_not_resident;
	st->not_running = s->rx_not_running;
	st->order = s->div_order;
	st->dropped = s->dropped;
	st->tx_misses = s->tx_misses;
	st->buffered_lost = u->div_lost;
	return 0;
}

NETVM_PUBLIC int netvm_unet_flow_stats(struct netvm_unet *u,
				       struct netvm_unet_flow_stats *st)
{
	volatile struct nvm_unet_status *s;

	if (!u || !st)
		return -EINVAL;
	s = status(u);
	st->hold_on = s->hold_on;
	st->hold_off = s->hold_off;
	st->tx_held = s->tx_held;
	st->tx_held_now = s->tx_held_now;
	st->hold_expired = s->hold_expired;
	st->peer_dropped = s->peer_dropped;
	st->buffered_lost = u->div_lost;
	st->divert_mode = s->divert_mode;
	return 0;
}

NETVM_PUBLIC int netvm_unet_dsm_stats(struct netvm_unet *u,
				      struct netvm_unet_dsm_stats *st)
{
	if (!u || !st)
		return -EINVAL;
	st->quiet = status(u)->quiet;
	st->reply_hits = status(u)->reply_hits;
	st->reply_misses = status(u)->reply_misses;
	st->events = status(u)->events;
	return 0;
}
