// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * Producer/consumer over a NetVM channel: the producer sends COUNT
 * messages of 1..6000 bytes (message i: byte j is (i + j * 7) & 0xff,
 * size (i * 997) % 6000 + 1); the consumer checks each in place.  The
 * ring has 8 entries, so the producer waits for credits most of the time.
 *
 *   netvm-prodcons consume PEER_NODE COUNT
 *   netvm-prodcons produce PEER_NODE COUNT
 *
 * Each takes port 1 on its node; either may start first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netvm.h>
#include <netvm_sync.h>

#define MSG_MAX	6000

static int fail(const char *what, int err)
{
	fprintf(stderr, "netvm-prodcons: %s: %s\n", what, netvm_strerror(err));
	return 1;
}

static size_t msg_size(unsigned int i)
{
	return (i * 997u) % MSG_MAX + 1;
}

int main(int argc, char **argv)
{
	static uint8_t msg[MSG_MAX];
	const struct netvm_chan_cfg cfg = {
		.name = "pc", .nbuf = 8, .msg_max = MSG_MAX, .refill = 4,
		.sent_notf = 1, .repl_notf = 2, .timeout_ms = 60000,
	};
	struct netvm_chan *ch;
	struct netvm *nv;
	unsigned int i, j, count, bad = 0, produce;
	unsigned long bytes = 0;
	const uint8_t *p;
	size_t len;
	int err;

	if (argc != 4 || (strcmp(argv[1], "produce") && strcmp(argv[1], "consume")))
		return fprintf(stderr, "usage: netvm-prodcons produce|consume PEER_NODE COUNT\n"), 2;
	produce = !strcmp(argv[1], "produce");
	count = atoi(argv[3]);

	if ((err = netvm_open(0, &nv)) || (err = netvm_register(nv, NETVM_PORT_ANY, 0)) < 0)
		return fail("open/register", err);
	err = produce ? netvm_chan_open_send(nv, atoi(argv[2]), 1, &cfg, &ch) :
			netvm_chan_open_recv(nv, atoi(argv[2]), 1, &cfg, &ch);
	if (err)
		return fail("chan_open", err);

	for (i = 0; i < count; i++) {
		if (produce) {
			for (j = 0; j < msg_size(i); j++)
				msg[j] = (uint8_t)(i + j * 7);
			err = netvm_chan_send(ch, msg, msg_size(i));
		} else {
			err = netvm_chan_recv(ch, (const void **)&p, &len);
			if (!err && len != msg_size(i))
				bad++;
			for (j = 0; !err && j < len; j++)
				bad += p[j] != (uint8_t)(i + j * 7);
		}
		if (err)
			return fail(produce ? "send" : "recv", err);
		bytes += msg_size(i);
	}
	if ((err = netvm_chan_close(ch)))
		return fail("close", err);
	printf("%s %u messages, %lu bytes, %u bad\n", produce ? "produced" : "consumed",
	       count, bytes, bad);
	netvm_close(nv);
	return bad ? 1 : 0;
}
