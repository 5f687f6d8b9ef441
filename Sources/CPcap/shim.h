#ifndef TAPKIT_CPCAP_SHIM_H
#define TAPKIT_CPCAP_SHIM_H
#include <pcap/pcap.h>
#endif
