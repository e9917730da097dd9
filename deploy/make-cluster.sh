#!/usr/bin/env bash
# Writes everything a nasd cluster of real machines needs from a short description of it
# (hosts, addresses, interfaces, volumes; deploy/cluster.example is one):
#   deploy/make-cluster.sh DESCRIPTION OUTDIR
# For every host NAME, OUTDIR/NAME/ holds what goes into that host's config_dir (default
# /etc/nasd): nasd.conf (the node's own), cluster.conf (the same on every host), cluster.key and
# handle.key (the same on every host: made once in OUTDIR, kept when present), and nasd.service,
# the systemd unit (to /etc/systemd/system/), which runs nasd as `user` with CAP_NET_ADMIN and
# CAP_NET_RAW and no other capability (its EVS and pool addresses are put on `interface` and
# announced; NFS 2049 and MOUNT 20048 need no privilege), and removes those addresses after any
# end of the process (ExecStopPost). `{host}` in data_dir and config_dir stands for the host's
# name (for hosts that share a file system, as in the tests).
#
# The description: a [cluster] section and a [host NAME] per machine, `key = value` lines,
# `#` comments:
#   [cluster]
#   name = lab                    # required
#   authority = etcd              # etcd (etcd_endpoints required) or file (leases on shared_dir)
#   etcd_endpoints = http://10.0.5.1:2379, http://10.0.5.2:2379, http://10.0.5.3:2379
#   etcd_ca, etcd_cert, etcd_key  # https:// to etcd (files on every host), as in [cluster]
#   etcd_allow_insecure = true    # http:// to etcd: only on a network the nodes and etcd alone share
#   shared_dir = /srv/nasd-san    # required: the SAN, the same folder on every host
#   interface = eth1              # required: the client-facing NIC, the same name on every host
#   prefix = 24                   # required: the EVS and pool addresses' subnet length
#   clients = 10.0.4.0/24         # required: who may mount (every export)
#   export_options = rw           # default rw (secure, root_squash), as knfsd's
#   volume_size = 100G            # default 1G; backing files are allocated in full
#   pool = 10.0.4.21-10.0.4.26    # optional: a SmartConnect-style pool over every host
#   lease_ms = 4000  data_dir = /var/lib/nasd  config_dir = /etc/nasd  bin_dir = /opt/nasd/bin
#   user = nasd                   # the account the unit runs nasd as (create it: useradd -r nasd)
#   [host n1]
#   front = 10.0.4.1              # the host's own client-facing address (already on interface)
#   back = 10.0.5.1               # its back-end address: interconnect, mirror, management page
#   evs = 10.0.4.11               # its EVS address: put on interface by whoever serves it
#   volumes = v0, v1              # the volumes its EVS serves (names; ids are given in order)
# Every host mirrors its NVRAM to the next (a ring), as deploy/start-cluster.sh --nodes does.
set -euo pipefail
[ $# = 2 ] || { sed -n '2,4p' "$0" >&2; exit 2; }
DESC=$1 OUT=$2
[ -r "$DESC" ] || { echo "make-cluster.sh: cannot read $DESC" >&2; exit 2; }

declare -A C=([authority]=file [export_options]=rw [volume_size]=1G [lease_ms]=4000 [data_dir]=/var/lib/nasd
              [config_dir]=/etc/nasd [bin_dir]=/opt/nasd/bin [user]=nasd)
declare -A H
hosts=()
section="" line_no=0
die() { echo "make-cluster.sh: $DESC:$line_no: $*" >&2; exit 2; }
while IFS= read -r line || [ -n "$line" ]; do
  line_no=$((line_no + 1))
  line=${line%%#*}
  line=$(sed 's/^[ \t]*//; s/[ \t]*$//' <<<"$line")
  [ -n "$line" ] || continue
  if [[ $line =~ ^\[cluster\]$ ]]; then section=cluster; continue; fi
  if [[ $line =~ ^\[host\ +([A-Za-z0-9][A-Za-z0-9_-]{0,30})\]$ ]]; then
    section=host:${BASH_REMATCH[1]}
    for h in "${hosts[@]}"; do [ "$h" != "${BASH_REMATCH[1]}" ] || die "host ${BASH_REMATCH[1]} given twice"; done
    hosts+=("${BASH_REMATCH[1]}")
    continue
  fi
  [[ $line =~ ^([a-z_]+)[[:space:]]*=[[:space:]]*(.*)$ ]] || die "not a [section] or key = value: $line"
  key=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
  [[ $value != *[\$\`\\\"\']* ]] || die "$key: quotes, \$, \` and \\ are not allowed in values"
  case $section in
    cluster)
      case $key in
        name|authority|etcd_endpoints|etcd_ca|etcd_cert|etcd_key|etcd_allow_insecure|shared_dir|interface|prefix|clients|export_options|volume_size|pool|lease_ms|data_dir|config_dir|bin_dir|user) C[$key]=$value ;;
        *) die "[cluster] unknown key '$key'" ;;
      esac ;;
    host:*)
      case $key in
        front|back|evs|volumes) H[${section#host:}.$key]=$value ;;
        *) die "[host] unknown key '$key'" ;;
      esac ;;
    *) die "key = value before any [cluster] or [host NAME]" ;;
  esac
done <"$DESC"
line_no=0
for k in name shared_dir interface prefix clients; do [ -n "${C[$k]:-}" ] || die "[cluster] $k is required"; done
case ${C[authority]} in
  file) ;;
  etcd) [ -n "${C[etcd_endpoints]:-}" ] || die "[cluster] authority = etcd needs etcd_endpoints" ;;
  *) die "[cluster] authority: file or etcd, not '${C[authority]}'" ;;
esac
[ ${#hosts[@]} -ge 2 ] && [ ${#hosts[@]} -le 8 ] || die "a cluster has 2 to 8 [host]s, not ${#hosts[@]}"
ipv4='^([0-9]{1,3}\.){3}[0-9]{1,3}$'
for h in "${hosts[@]}"; do
  for k in front back evs volumes; do [ -n "${H[$h.$k]:-}" ] || die "[host $h] $k is required"; done
  for k in front back evs; do [[ ${H[$h.$k]} =~ $ipv4 ]] || die "[host $h] $k: '${H[$h.$k]}' is not an IPv4 address"; done
done
at_host() { sed "s/{host}/$1/g" <<<"$2"; }

mkdir -p "$OUT"
for k in cluster.key handle.key; do
  [ -s "$OUT/$k" ] || (umask 077 && head -c 32 /dev/urandom >"$OUT/$k.tmp" && mv "$OUT/$k.tmp" "$OUT/$k")
done

cluster_conf() {  # HOST: the one cluster config, as HOST's config_dir names the key
  local cdir i=0 id=0 v h vols
  cdir=$(at_host "$1" "${C[config_dir]}")
  echo "# Written by deploy/make-cluster.sh from $(basename "$DESC"): the cluster \"${C[name]}\", the same on every host."
  echo "[cluster]"
  echo "name = ${C[name]}"
  echo "key = $cdir/cluster.key"
  echo "shared_dir = ${C[shared_dir]}"
  echo "authority = ${C[authority]}"
  if [ "${C[authority]}" = etcd ]; then
    echo "etcd_endpoints = ${C[etcd_endpoints]}"
    local k
    for k in etcd_ca etcd_cert etcd_key etcd_allow_insecure; do
      [ -z "${C[$k]:-}" ] || echo "$k = ${C[$k]}"
    done
  fi
  echo "failback = manual"
  echo "lease_ms = ${C[lease_ms]}"
  for h in "${hosts[@]}"; do
    printf '\n[member %s]\ninterconnect = %s:7001\nmirror_listen = %s:7101\n' "$h" "${H[$h.back]}" "${H[$h.back]}"
  done
  for h in "${hosts[@]}"; do
    i=$((i + 1))
    printf '\n[evs evs%d]\nnode = %s\naddress = %s/%s\ninterface = %s\nvolumes = %s\n' \
      "$i" "$h" "${H[$h.evs]}" "${C[prefix]}" "${C[interface]}" "${H[$h.volumes]}"
  done
  for h in "${hosts[@]}"; do
    IFS=', ' read -r -a vols <<<"${H[$h.volumes]}"
    for v in "${vols[@]}"; do
      [ -n "$v" ] || continue
      printf '\n[volume %s]\nid = %d\nsize = %s\n' "$v" "$id" "${C[volume_size]}"
      printf '\n[export /r/%s]\nvolume = %s\nclients = %s\noptions = %s\n' "$v" "$v" "${C[clients]}" "${C[export_options]}"
      id=$((id + 1))
    done
  done
  [ -z "${C[pool]:-}" ] ||
    printf '\n[pool clients]\naddresses = %s\ninterface = %s\nprefix = %s\n' "${C[pool]}" "${C[interface]}" "${C[prefix]}"
}

for h in "${hosts[@]}"; do
  mkdir -p "$OUT/$h"
  cdir=$(at_host "$h" "${C[config_dir]}") data=$(at_host "$h" "${C[data_dir]}")
  cluster_conf "$h" >"$OUT/$h/cluster.conf"
  cp "$OUT/cluster.key" "$OUT/handle.key" "$OUT/$h/"
  cat >"$OUT/$h/nasd.conf" <<CONF
# Written by deploy/make-cluster.sh from $(basename "$DESC"): node $h; the cluster is in cluster.conf.
[node]
name = $h
data_dir = $data
listen = ${H[$h.front]}          # this host's own address: NFS and MOUNT for every volume
http_listen = ${H[$h.back]}      # the management page and metrics, on the back end
handle_key = $cdir/handle.key
cluster_config = $cdir/cluster.conf
CONF
  cat >"$OUT/$h/nasd.service" <<UNIT
# Written by deploy/make-cluster.sh: nasd node $h of the cluster "${C[name]}".
# Install: $cdir/ gets nasd.conf, cluster.conf, cluster.key, handle.key (owned by ${C[user]},
# mode 0600 for the keys); this file goes to /etc/systemd/system/nasd.service;
# $data and ${C[shared_dir]} must belong to ${C[user]}.
[Unit]
Description=nasd NFSv3 NAS node $h of cluster ${C[name]}
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User=${C[user]}
Group=${C[user]}
ExecStart=${C[bin_dir]}/nasd --config $cdir/nasd.conf
# After any end of the process, kill -9 included: the EVS and pool addresses it put on
# ${C[interface]} go, so this host stops answering ARP for them (cluster/README.md).
ExecStopPost=${C[bin_dir]}/nasd --config $cdir/nasd.conf --remove-addresses
ExecReload=/bin/kill -HUP \$MAINPID
KillSignal=SIGTERM
TimeoutStopSec=60
Restart=always
RestartSec=2
# Addresses on interfaces (netlink) and ARP (packet sockets): these two and nothing else.
CapabilityBoundingSet=CAP_NET_ADMIN CAP_NET_RAW
AmbientCapabilities=CAP_NET_ADMIN CAP_NET_RAW
NoNewPrivileges=yes
LimitNOFILE=1048576
LimitMEMLOCK=infinity

[Install]
WantedBy=multi-user.target
UNIT
done
rm -f "$OUT/cluster.key.tmp" "$OUT/handle.key.tmp"
echo "wrote ${#hosts[@]} hosts' configs and units to $OUT (cluster ${C[name]}, authority ${C[authority]})"
for h in "${hosts[@]}"; do
  echo "  $h: $OUT/$h/ -> $(at_host "$h" "${C[config_dir]}")/ on $h; evs ${H[$h.evs]}/${C[prefix]} on ${C[interface]}; volumes ${H[$h.volumes]}"
done
