// SPDX-License-Identifier: MIT
/*
 * Unit tests of the U-Net receive's merge of the receive queue and the
 * driver's FIFO of diverted messages (libnetvm_unet.c: take,
 * take_diverted) against a fake driver: the source is included so the
 * static functions run as they are, with ioctl(2) answered here.
 *
 * The race (CI, flow-erecv): the receiver looks at its next receive
 * descriptor and finds it empty; before it looks at the status the NI
 * fills the queue (or the free buffers run out) and diverts the next
 * message.  The receiver then sees a diverted message that is not the
 * next in order, no queued one (its look was before they came) and none
 * in flight: it must look at the queue again, not take the diverted one
 * as if overflow control had dropped the ones between.
 */
#define _GNU_SOURCE	/* as the library (F_SETSIG) */
#include "check_run.h"
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

static int fake_ioctl(int fd, unsigned long req, ...);
#define ioctl fake_ioctl
#include "../libnetvm_unet.c"
#undef ioctl

#define FIFO_MAX	16

static struct {
	struct netvm_unet *u;
	uint32_t fifo[FIFO_MAX];	/* msgnos, oldest first */
	unsigned int nfifo;
	/* at the first PEEK: these go into the receive queue ("the NI was
	 * faster than the receiver's looks") */
	uint32_t late_first, late_n;
	int peeks;
} drv;

static uint32_t msg_len(uint32_t msgno)
{
	return 1 + msgno % 50;
}

static void ring_put(struct netvm_unet *u, uint32_t slot, uint32_t msgno)
{
	volatile struct nvm_unet_rx_desc *d = rdesc(u, slot);

	d->channel = 0;
	d->len = msg_len(msgno);
	d->nbuf = 0;
	d->flags = NVM_UNET_F_INLINE;
	d->msgno = msgno;
	memset((void *)d->data, (int)(msgno & 0xff), d->len);
	__sync_synchronize();
	d->seq = slot + 1;
}

static int fake_ioctl(int fd, unsigned long req, ...)
{
	struct netvm_unet_drecv *r;
	uint32_t head;
	va_list ap;

	(void)fd;
	va_start(ap, req);
	r = va_arg(ap, struct netvm_unet_drecv *);
	va_end(ap);
	ck_assert_uint_eq(req, NETVM_IOC_UNET_DRECV);
	if ((r->flags & NETVM_UNET_PEEK) && drv.peeks++ == 0)
		for (uint32_t i = 0; i < drv.late_n; i++)
			ring_put(drv.u, drv.u->rx_cons + i, drv.late_first + i);
	r->buffered = drv.nfifo;
	r->overflow = 0;
	if (!drv.nfifo) {
		errno = EAGAIN;
		return -1;
	}
	head = drv.fifo[0];
	r->msgno = head;
	if ((r->flags & NETVM_UNET_PEEK) || head != r->want) {
		if (!(r->flags & NETVM_UNET_PEEK)) {
			errno = EAGAIN;
			return -1;
		}
		return 0;
	}
	r->len = msg_len(head);
	r->channel = 0;
	r->dsm = 0;
	r->src = 0;
	memset((void *)(uintptr_t)r->buf, (int)(head & 0xff), r->len);
	memmove(drv.fifo, drv.fifo + 1, --drv.nfifo * sizeof(drv.fifo[0]));
	return 0;
}

static struct netvm_unet *fake_unet(void)
{
	struct netvm_unet *u = calloc(1, sizeof(*u));
	uint8_t *sram;

	ck_assert_ptr_nonnull(u);
	u->fd = -1;
	sram = calloc(1, NVM_EP_STRIDE);
	u->host = calloc(UNET_RXQ_LEN, sizeof(struct nvm_unet_rx_desc));
	ck_assert_ptr_nonnull(sram);
	ck_assert_ptr_nonnull(u->host);
	u->sram = sram;
	u->info.buf_size = 4096;
	memset(&drv, 0, sizeof(drv));
	drv.u = u;
	return u;
}

static void free_unet(struct netvm_unet *u)
{
	free((void *)u->sram);
	free(u->host);
	free(u);
}

/* Takes @n messages; each must be the next in order from @first. */
static void expect_in_order(struct netvm_unet *u, uint32_t first, uint32_t n)
{
	uint8_t buf[NVM_UNET_MSG_MAX];
	struct netvm_unet_msg m;

	for (uint32_t i = 0; i < n; i++) {
		int err, tries = 0;

		do
			err = take(u, buf, sizeof(buf), &m, 1);
		while (err == -EAGAIN && ++tries < 4);
		ck_assert_int_eq(err, 0);
		ck_assert_msg(m.len == msg_len(first + i) &&
			      buf[0] == ((first + i) & 0xff),
			      "message %u: got %zu B of %u (want %u B)",
			      first + i, m.len, buf[0], msg_len(first + i));
	}
}

/* The queue filled after the receiver's look, then the FIFO got one. */
START_TEST(diverted_after_late_queue)
{
	struct netvm_unet *u = fake_unet();

	drv.fifo[0] = 5;
	drv.fifo[1] = 6;
	drv.nfifo = 2;
	status(u)->diverted = 2;
	drv.late_first = 0;
	drv.late_n = 5;
	expect_in_order(u, 0, 7);
	ck_assert_uint_eq(drv.nfifo, 0);
	free_unet(u);
}
END_TEST

/* A real gap (overflow control dropped 3..4): the diverted one comes next. */
START_TEST(diverted_after_gap)
{
	struct netvm_unet *u = fake_unet();

	ring_put(u, 0, 0);
	ring_put(u, 1, 1);
	ring_put(u, 2, 2);
	drv.fifo[0] = 5;
	drv.nfifo = 1;
	status(u)->diverted = 1;
	expect_in_order(u, 0, 3);
	expect_in_order(u, 5, 1);
	free_unet(u);
}
END_TEST

/* Both sources ready: the FIFO's head is older than the queue's. */
START_TEST(diverted_before_queue)
{
	struct netvm_unet *u = fake_unet();

	ring_put(u, 0, 2);
	drv.fifo[0] = 0;
	drv.fifo[1] = 1;
	drv.nfifo = 2;
	status(u)->diverted = 2;
	expect_in_order(u, 0, 3);
	free_unet(u);
}
END_TEST

int main(void)
{
	return CHECK_RUN("libnetvm-unet-merge", "merge", 0,
			 diverted_after_late_queue, diverted_after_gap,
			 diverted_before_queue);
}
