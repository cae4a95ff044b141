// A trace driver for MatiasBjorling/flashsim, written for ftlsim's speed comparison (bench/peers/run.py).
// flashsim ships no program that replays a plain trace file, so this one does: it reads the DiskSim / SSDsim
// ASCII trace that ftlsim and MQSim read (time_ns device lba_sectors size_sectors op, op 1 = read, 0 = write),
// sends every page of every request to flashsim's Ssd::event_arrive one page at a time (as flashsim's own
// run_ufliptrace.cpp does), and prints flashsim's statistics. flashsim reads its configuration from ssd.conf in
// the working directory. Build it against flashsim's objects, leaving out ssd_ftl.o as flashsim's Makefile
// does; the commands are in docs/speed-against-peers.md.
#include <cstdio>
#include <cstdlib>
#include "ssd.h"

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s TRACE PAGE_SECTORS  (run where ssd.conf is)\n", argv[0]);
		return 2;
	}
	FILE *trace = fopen(argv[1], "r");
	if (trace == NULL) {
		fprintf(stderr, "cannot open trace %s\n", argv[1]);
		return 2;
	}
	const unsigned long page_sectors = strtoul(argv[2], NULL, 10);
	if (page_sectors == 0) {
		fprintf(stderr, "PAGE_SECTORS must be a positive number of 512-byte sectors, got %s\n", argv[2]);
		return 2;
	}

	ssd::load_config();
	ssd::Ssd *drive = new ssd::Ssd();

	double time_ns;
	unsigned int device, op;
	unsigned long lba, sectors;
	unsigned long requests = 0, page_reads = 0, page_writes = 0;
	while (fscanf(trace, "%lf %u %lu %lu %u", &time_ns, &device, &lba, &sectors, &op) == 5) {
		const unsigned long first = lba / page_sectors;
		const unsigned long last = (lba + sectors - 1) / page_sectors;
		const enum ssd::event_type type = op == 1 ? ssd::READ : ssd::WRITE;
		for (unsigned long page = first; page <= last; page++)
			drive->event_arrive(type, page, 1, time_ns / 1000.0);
		if (op == 1)
			page_reads += last - first + 1;
		else
			page_writes += last - first + 1;
		requests++;
	}
	if (!feof(trace)) {
		fprintf(stderr, "%s: request %lu is not 'time_ns device lba_sectors sectors op'\n", argv[1], requests + 1);
		return 2;
	}
	fclose(trace);

	printf("driver: %lu requests, %lu host page reads, %lu host page writes\n", requests, page_reads, page_writes);
	drive->print_statistics();
	drive->print_ftl_statistics();
	delete drive;
	return 0;
}
