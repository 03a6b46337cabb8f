#!/usr/bin/env bash
# A one-node Ceph for tests: one monitor, one OSD on memstore (its objects in memory), and the RADOS
# Gateway (S3) on loopback, all under one directory and stopped by their pids. Debian's radosgw,
# ceph-mon and ceph-osd (Ceph 16.2).
#
#   test/setup/ceph.sh start   brings it up (or finds it up) and prints env lines:
#                              CEPH_S3_ENDPOINT, CEPH_S3_ACCESS_KEY, CEPH_S3_SECRET_KEY, CEPH_DIR
#   test/setup/ceph.sh stop    stops what start started and removes the directory
#
# Settings (env): CEPH_DIR (default /tmp/svc-ceph), CEPH_MON_PORT (default 6789), CEPH_RGW_PORT
# (default 7480), CEPH_S3_ACCESS_KEY / CEPH_S3_SECRET_KEY (the S3 user's keys; fixed test defaults).
# No cephx: everything listens on 127.0.0.1 only, and the gateway checks S3 signatures itself.
set -euo pipefail

DIR=${CEPH_DIR:-/tmp/svc-ceph}
MON_PORT=${CEPH_MON_PORT:-6789}
RGW_PORT=${CEPH_RGW_PORT:-7480}
ACCESS=${CEPH_S3_ACCESS_KEY:-SVCTESTACCESSKEY0001}
SECRET=${CEPH_S3_SECRET_KEY:-svc-test-secret-key-0000000000000000000001}
CONF=$DIR/ceph.conf
DAEMONS=(mon.a osd.0 client.rgw)
trap 'echo "ceph.sh: line $LINENO failed ($BASH_COMMAND); logs in $DIR/log" >&2' ERR

say_env() {
  echo "CEPH_S3_ENDPOINT=http://127.0.0.1:$RGW_PORT"
  echo "CEPH_S3_ACCESS_KEY=$ACCESS"
  echo "CEPH_S3_SECRET_KEY=$SECRET"
  echo "CEPH_DIR=$DIR"
}

# A pid that runs (a killed daemon stays a zombie where the container's init does not reap).
running() { [ -r "/proc/$1/stat" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat")" != Z ]; }
alive() { [ -f "$DIR/run/$1.pid" ] && running "$(cat "$DIR/run/$1.pid")"; }

# Waits up to $1 tenths of a second for the command after it to succeed.
wait_for() {
  local tenths=$1
  shift
  for _ in $(seq "$tenths"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  return 1
}

stop() {
  local name pid
  for name in client.rgw osd.0 mon.a; do
    if alive "$name"; then
      pid=$(cat "$DIR/run/$name.pid")
      # Nothing here outlives the run (memstore would only spend its shutdown saving itself).
      kill -9 "$pid" 2>/dev/null || true
      for _ in $(seq 50); do running "$pid" || break; sleep 0.1; done
    fi
  done
  # Only a directory this script made (it holds ceph.conf) is removed.
  if [ -f "$CONF" ]; then rm -rf "$DIR"; fi
}

start() {
  for bin in ceph-mon ceph-osd radosgw radosgw-admin monmaptool ceph; do
    command -v "$bin" >/dev/null || {
      echo "$bin is missing: apt-get install radosgw ceph-mon ceph-osd" >&2
      exit 3
    }
  done
  local up=0
  for name in "${DAEMONS[@]}"; do alive "$name" && up=$((up + 1)); done
  if [ "$up" -eq "${#DAEMONS[@]}" ]; then
    say_env
    return 0
  fi
  # Half up (a crash or an interrupted start): begin again from nothing.
  stop
  mkdir -p "$DIR"/{run,log,mon,osd}
  local fsid
  fsid=$(cat /proc/sys/kernel/random/uuid)
  cat >"$CONF" <<EOF
[global]
fsid = $fsid
mon host = v1:127.0.0.1:$MON_PORT
ms bind msgr2 = false
public addr = 127.0.0.1
auth cluster required = none
auth service required = none
auth client required = none
run dir = $DIR/run
pid file = $DIR/run/\$name.pid
admin socket = $DIR/run/\$name.asok
log file = $DIR/log/\$name.log
mon data = $DIR/mon/\$name
osd data = $DIR/osd/\$name
# One copy of everything, few placement groups: one OSD holds it all.
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
# The monitor proposes changes at once instead of batching them for a second: pool and OSD
# creation then take milliseconds, which is most of the start time.
paxos propose interval = 0.01
paxos min wait = 0.01
mon lease = 1
[osd]
osd objectstore = memstore
memstore device bytes = 1073741824
osd crush update on start = false
# The script placed the OSD in the CRUSH map; its start asks the monitor nothing more about it.
osd class update on start = false
osd heartbeat grace = 60
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT
rgw data = $DIR/rgw
rgw enable usage log = false
rgw dns name = 127.0.0.1
EOF
  monmaptool --create --fsid "$fsid" --addv a "[v1:127.0.0.1:$MON_PORT]" "$DIR/monmap" >/dev/null
  ceph-mon -c "$CONF" --mkfs -i a --monmap "$DIR/monmap"
  ceph-mon -c "$CONF" -i a
  local c=(ceph -c "$CONF" --connect-timeout 10)
  wait_for 100 "${c[@]}" mon stat || {
    echo "the monitor did not answer: $DIR/log/mon.a.log" >&2
    exit 1
  }
  local uuid
  uuid=$(cat /proc/sys/kernel/random/uuid)
  "${c[@]}" osd new "$uuid" >/dev/null
  mkdir -p "$DIR/osd/osd.0"
  ceph-osd -c "$CONF" -i 0 --mkfs --osd-uuid "$uuid" 2>>"$DIR/log/mkfs.log"
  # The OSD in the CRUSH map under a host under the default root, so placement finds it.
  "${c[@]}" osd crush add osd.0 1 root=default host=localhost >/dev/null 2>&1
  ceph-osd -c "$CONF" -i 0 2>>"$DIR/log/osd.0.stderr"
  wait_for 300 bash -c "${c[*]} osd stat -f json | grep -q '\"num_up_osds\":1'" || {
    echo "the OSD did not come up: $DIR/log/osd.0.log" >&2
    exit 1
  }
  radosgw -c "$CONF" -n client.rgw
  wait_for 300 bash -c "exec 3<>/dev/tcp/127.0.0.1/$RGW_PORT" || {
    echo "the gateway did not answer: $DIR/log/client.rgw.log" >&2
    exit 1
  }
  radosgw-admin -c "$CONF" user create --uid=svc --display-name=svc --access-key="$ACCESS" --secret="$SECRET" >/dev/null
  say_env
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
