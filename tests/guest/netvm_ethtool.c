// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * netvm-ethtool: what `ethtool -i IFACE` and `ethtool -S IFACE` print,
 * through the same SIOCETHTOOL requests, for the guest suite until the
 * image carries Debian's ethtool (tests/guest/eth_groups.py).
 *
 *   netvm-ethtool IFACE
 *
 * Prints "driver: ...", "version: ...", "firmware-version: ...",
 * "bus-info: ..." and then one "NAME: VALUE" line per statistic; exits 1
 * if a request fails.
 */
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static int request(int fd, const char *ifname, void *data)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = data;
	return ioctl(fd, SIOCETHTOOL, &ifr);
}

int main(int argc, char **argv)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	struct ethtool_gstrings *names;
	struct ethtool_stats *stats;
	uint32_t n, i;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: netvm-ethtool IFACE\n");
		return 2;
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || request(fd, argv[1], &info) < 0) {
		perror("ETHTOOL_GDRVINFO");
		return 1;
	}
	printf("driver: %s\nversion: %s\nfirmware-version: %s\nbus-info: %s\n",
	       info.driver, info.version, info.fw_version, info.bus_info);
	n = info.n_stats;
	names = calloc(1, sizeof(*names) + (size_t)n * ETH_GSTRING_LEN);
	stats = calloc(1, sizeof(*stats) + (size_t)n * sizeof(uint64_t));
	if (!names || !stats)
		return 1;
	names->cmd = ETHTOOL_GSTRINGS;
	names->string_set = ETH_SS_STATS;
	names->len = n;
	stats->cmd = ETHTOOL_GSTATS;
	stats->n_stats = n;
	if (request(fd, argv[1], names) < 0 || request(fd, argv[1], stats) < 0) {
		perror("ETHTOOL_GSTRINGS/GSTATS");
		return 1;
	}
	printf("NIC statistics:\n");
	for (i = 0; i < n; i++)
		printf("     %.*s: %llu\n", ETH_GSTRING_LEN,
		       (const char *)names->data + (size_t)i * ETH_GSTRING_LEN,
		       (unsigned long long)stats->data[i]);
	close(fd);
	return 0;
}
