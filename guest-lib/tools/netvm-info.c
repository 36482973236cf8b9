// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * netvm-info: print a netvm NIC's identity and state.
 *
 *   netvm-info [-d INDEX]
 *
 * Exit status: 0 on success, 1 if the device is missing or unusable.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "netvm.h"
#include "netvm_pattern.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: netvm-info [-d INDEX]\n"
		   "Print node id, link state, firmware version and SRAM size of /dev/netvmINDEX.\n");
}

int main(int argc, char **argv)
{
	struct netvm_info info;
	unsigned long index = 0;
	struct netvm *nv;
	int opt, err;

	while ((opt = getopt(argc, argv, "d:h")) != -1) {
		switch (opt) {
		case 'd':
			if (netvm_parse_uint(optarg, 255, &index)) {
				fprintf(stderr, "netvm-info: bad device index '%s'\n", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}

	err = netvm_open((int)index, &nv);
	if (err) {
		fprintf(stderr, "netvm-info: /dev/" NETVM_DEV_PREFIX "%lu: %s\n",
			index, netvm_strerror(err));
		return 1;
	}
	err = netvm_info(nv, &info);
	if (err) {
		fprintf(stderr, "netvm-info: /dev/" NETVM_DEV_PREFIX "%lu: %s\n",
			index, netvm_strerror(err));
		netvm_close(nv);
		return 1;
	}
	printf("device:          /dev/" NETVM_DEV_PREFIX "%lu\n", index);
	printf("node id:         %u\n", info.node_id);
	printf("link:            %s\n", (info.link & NVM_LINK_UP) ? "up" : "down");
	printf("firmware:        0x%08x\n", info.fw_version);
	printf("abi version:     %u.%u\n", info.abi_version >> 16,
	       info.abi_version & 0xffff);
	printf("sram size:       %u bytes (%u KiB)\n", info.sram_size,
	       info.sram_size / 1024);
	printf("max endpoints:   %u\n", info.max_endpoints);
	printf("raw max payload: %u bytes\n", info.raw_max_payload);
	netvm_close(nv);
	return 0;
}
