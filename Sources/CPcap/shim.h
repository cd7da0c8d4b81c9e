#include <stdio.h>
#include <pcap/pcap.h>
