// SPDX-License-Identifier: MIT
/*
 * What an endpoint sends and receives through.  Remote nodes: a U-Net
 * endpoint with one any-source channel (tag FNV_TAG(port)) that every
 * peer's message arrives on, the NI naming the sender, and up to 15
 * channels towards peers, opened on first use and replaced least recently
 * used.  The own node (the NIC does not loop back): a datagram socket in
 * the abstract namespace, "netvm-fi/NIC/PORT", each message led by the
 * sending endpoint's port.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fnv.h"

#define SEG_SIZE	(NETVM_UNET_TX_AREA + RX_BUFS * 4096)
#define RX_BUFS		64
#define FNV_LO_EVERY	16	/* U-Net messages before the loop-back's turn */
/* Empty looks before the loop-back is asked, while it has carried
 * nothing either way: each ask is a recvmsg(2), as dear under TCG as the
 * rest of an empty progress pass. */
#define FNV_LO_IDLE	8

struct lo_hdr {
	uint16_t port;		/* the sending endpoint's */
	uint16_t reserved;
};

static socklen_t lo_name(struct sockaddr_un *sa, uint16_t nic, uint16_t port)
{
	int n;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	/* abstract: sun_path[0] is 0, the name is the bytes after it */
	n = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1,
		     "netvm-fi/%u/%u", nic, port);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

int fnv_wire_open(struct fnv_wire *w, struct fnv_domain *dom)
{
	struct sockaddr_un sa;
	socklen_t sl;
	int err;

	memset(w, 0, sizeof(*w));
	w->lo_fd = -1;
	for (int i = 0; i < FNV_CHANS; i++)
		w->ch[i].id = -1;
	err = netvm_unet_open(dom->nv, SEG_SIZE, 4096, RX_BUFS, &w->u);
	if (err)
		goto fail;
	err = -EOPNOTSUPP;
	if (netvm_unet_emulated(w->u))
		goto fail;	/* any-source channels need a NIC port */
	w->node = dom->node;
	w->nic = (uint16_t)dom->index;
	w->port = (uint16_t)netvm_unet_port(w->u);
	w->any = netvm_unet_channel(w->u, NETVM_UNET_ANY, NETVM_UNET_ANY,
				    FNV_TAG(w->port));
	err = w->any;
	if (err < 0)
		goto fail;
	w->lo_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	err = -errno;
	if (w->lo_fd < 0)
		goto fail;
	sl = lo_name(&sa, w->nic, w->port);
	if (bind(w->lo_fd, (struct sockaddr *)&sa, sl)) {
		err = -errno;
		goto fail;
	}
	return 0;
fail:
	FI_WARN(&fnv_prov, FI_LOG_EP_CTRL, "endpoint on netvm%d: %s\n",
		dom->index, strerror(-err));
	fnv_wire_close(w);
	return err;
}

void fnv_wire_close(struct fnv_wire *w)
{
	if (w->lo_fd >= 0)
		close(w->lo_fd);
	w->lo_fd = -1;
	netvm_unet_close(w->u);	/* its channels go with it */
	w->u = NULL;
}

/* The channel to (node, port): an open one, or a new one in its place. */
static int channel_for(struct fnv_wire *w, uint16_t node, uint16_t port)
{
	struct fnv_chan *c = NULL, *old = &w->ch[0];
	int id, err;

	for (int i = 0; i < FNV_CHANS; i++) {
		if (w->ch[i].id >= 0 && w->ch[i].node == node &&
		    w->ch[i].port == port) {
			w->ch[i].used = ++w->clock;
			return w->ch[i].id;
		}
		if (w->ch[i].id < 0 && !c)
			c = &w->ch[i];
		if (w->ch[i].used < old->used)
			old = &w->ch[i];
	}
	if (!c) {
		/* the NI must have taken its sends before it closes */
		err = netvm_unet_flush(w->u, -1);
		if (err)
			return err;
		err = netvm_unet_unchannel(w->u, old->id);
		if (err)
			return err;
		old->id = -1;
		c = old;
	}
	id = netvm_unet_channel(w->u, node, port, FNV_TAG(port));
	if (id < 0)
		return id;
	c->id = id;
	c->node = node;
	c->port = port;
	c->used = ++w->clock;
	return id;
}

static int lo_send(struct fnv_wire *w, uint16_t port, const void *buf,
		   size_t len)
{
	struct lo_hdr h = { .port = w->port };
	struct iovec iov[2] = {
		{ .iov_base = &h, .iov_len = sizeof(h) },
		{ .iov_base = (void *)buf, .iov_len = len },
	};
	struct sockaddr_un sa;
	struct msghdr m = {
		.msg_name = &sa, .msg_iov = iov, .msg_iovlen = 2,
	};

	m.msg_namelen = lo_name(&sa, w->nic, port);
	for (;;) {
		if (sendmsg(w->lo_fd, &m, 0) >= 0)
			return 0;
		if (errno == ECONNREFUSED || errno == ENOENT) {
			/* nobody there: lost, as on the wire */
			w->lo_dropped++;
			return 0;
		}
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		if (errno == EAGAIN && w->lo_lossy) {
			/* full: lost, and sent again by the RDM layer --
			 * waiting could wait for this very thread */
			w->lo_dropped++;
			return 0;
		}
		/* the receiver's socket is full: wait for room */
		poll(&(struct pollfd){ .fd = w->lo_fd, .events = POLLOUT }, 1,
		     10);
	}
}

int fnv_wire_send(struct fnv_wire *w, const struct fnv_addr *to,
		  const void *buf, size_t len)
{
	int ch;

	if (!len || len > FNV_MSG_MAX)
		return -EMSGSIZE;
	if (to->nic != w->nic)
		return -EHOSTUNREACH;	/* another NIC's fabric */
	if (to->node == w->node) {
		w->lo_talks = true;	/* answers may come back that way */
		return lo_send(w, to->port, buf, len);
	}
	ch = channel_for(w, to->node, to->port);
	if (ch < 0)
		return ch;
	/*
	 * Copied (inline or into the segment's staging area): the buffer is
	 * the caller's again.  The NI's verdict is not waited for: a
	 * datagram it refuses (its node unreachable) is lost as datagrams
	 * may be, counted in the endpoint's send_errors.  Waiting for it
	 * polls NIC memory, which costs each message milliseconds.
	 */
	return netvm_unet_send(w->u, ch, buf, len);
}

static ssize_t lo_recv(struct fnv_wire *w, void *buf, size_t cap,
		       uint16_t *port)
{
	struct lo_hdr h;
	struct iovec iov[2] = {
		{ .iov_base = &h, .iov_len = sizeof(h) },
		{ .iov_base = buf, .iov_len = cap },
	};
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
	ssize_t n;

	n = recvmsg(w->lo_fd, &m, MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0)
		return errno == EAGAIN ? -FI_EAGAIN : -errno;
	if ((size_t)n < sizeof(h) + 1 || (size_t)n > sizeof(h) + FNV_MSG_MAX ||
	    !h.port || h.port >= NVM_UNET_CHANNELS)
		return -FI_EAGAIN;	/* not one of ours: ignored */
	*port = h.port;
	return n - (ssize_t)sizeof(h);
}

static ssize_t unet_recv(struct fnv_wire *w, void *buf, size_t cap,
			 uint16_t *node, uint16_t *port)
{
	unsigned int ch, n, p;
	size_t len;
	int err;

	err = netvm_unet_recvfrom(w->u, buf, cap, &len, &ch, &n, &p, 0);
	if (err == -EMSGSIZE) {
		/* larger than the receive buffer: keep what fits */
		err = netvm_unet_recvfrom(w->u, w->big, sizeof(w->big), &len,
					  &ch, &n, &p, 0);
		if (!err && cap)
			memcpy(buf, w->big, cap);
	}
	if (err == -EAGAIN)
		return -FI_EAGAIN;
	if (err)
		return err;
	/*
	 * Any channel: a peer whose port number is ours sends with the tag
	 * of our own channel to it, which then takes the message.  The NI
	 * names the sender either way.
	 */
	*node = (uint16_t)n;
	*port = (uint16_t)p;
	return (ssize_t)len;
}

ssize_t fnv_wire_recv(struct fnv_wire *w, void *buf, size_t cap,
		      uint16_t *node, uint16_t *port)
{
	bool lo_turn = w->unet_run >= FNV_LO_EVERY;
	ssize_t n;

	/*
	 * U-Net first: a look at its ring is a load from memory, a look at
	 * the loop-back a recvmsg(2), which under TCG costs about as much
	 * as the rest of an empty progress pass.  The loop-back is asked
	 * when the ring is empty, and after FNV_LO_EVERY messages in a row
	 * from U-Net, so that neither source starves the other.  Until it
	 * has carried something either way, an empty ring asks it only
	 * every FNV_LO_IDLE looks: a process of this node that writes first
	 * waits that many passes of a spinning reader (a sleeping one polls
	 * both, fnv_wire_arm).
	 */
	if (!lo_turn) {
		n = unet_recv(w, buf, cap, node, port);
		if (n != -FI_EAGAIN) {
			w->unet_run++;
			return n;
		}
		if (!w->lo_talks && ++w->lo_idle < FNV_LO_IDLE)
			return n;
	}
	w->unet_run = 0;
	w->lo_idle = 0;
	n = lo_recv(w, buf, cap, port);
	if (n >= 0) {
		*node = w->node;
		w->lo_talks = true;
	}
	if (n != -FI_EAGAIN || !lo_turn)
		return n;
	return unet_recv(w, buf, cap, node, port);
}

int fnv_wire_arm(struct fnv_wire *w, int fds[2])
{
	struct pollfd p = { .fd = w->lo_fd, .events = POLLIN };

	fds[0] = netvm_unet_fd(w->u);
	fds[1] = w->lo_fd;
	if (netvm_unet_arm(w->u) == 1)
		return 1;
	if (poll(&p, 1, 0) <= 0)
		return 0;
	w->lo_idle = FNV_LO_IDLE;	/* the next look asks it */
	return 1;
}
