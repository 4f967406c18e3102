#!/usr/bin/env bash
# test/fresh-root.sh - the README's commands on a new machine: a fresh Debian 12
# (bookworm) root made with debootstrap, a clean clone of HEAD in it, and, as a
# new user there (passwordless sudo, nothing installed beyond a minimal Debian
# with make, sudo, python3 and ca-certificates), `make demo` then `make test`.
# Not run in CI: it needs root and the network, and takes about a minute for
# debootstrap, a few for make demo (its apt and pip downloads: torch from PyPI
# is about 5 GB with its CUDA libraries), then the whole suite's time.
#
#   sudo test/fresh-root.sh [--dir DIR] [--keep] [--cache DIR] [--mirror URL]
#                           [--targets "demo test"]
#
#   --dir DIR       build the root in DIR (must not exist or be empty);
#                   default a new folder under /var/tmp
#   --keep          keep the root afterwards (otherwise it is removed)
#   --cache DIR     keep downloads in DIR and reuse them on the next run: the
#                   debootstrap and apt .debs, and pip's cache (which holds what
#                   the index lets it cache); what is installed is the same
#   --mirror URL    the Debian mirror (default http://deb.debian.org/debian)
#   --targets "T.." the make targets run one after the other, each once, in the
#                   clone (default "demo test"; e.g. "fuzz asan")
#
# Prints the time of each step and a summary; exits 0 when every target
# passed on its first run, 1 when one failed (its output is in the log
# printed above), 2 on a usage error. The proc, sys and dev mounts are
# undone on exit, failure or interrupt included.

set -euo pipefail

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2; exit 2; }
die() { echo "fresh-root: error: $*" >&2; exit 1; }
say() { echo "fresh-root: $*"; }

dir="" keep=0 cache="" mirror=http://deb.debian.org/debian targets="demo test"
while [ $# -gt 0 ]; do
	case $1 in
	--dir) [ $# -ge 2 ] || usage; dir=$2; shift ;;
	--keep) keep=1 ;;
	--cache) [ $# -ge 2 ] || usage; cache=$2; shift ;;
	--mirror) [ $# -ge 2 ] || usage; mirror=$2; shift ;;
	--targets) [ $# -ge 2 ] || usage; targets=$2; shift ;;
	-h|--help) usage ;;
	*) echo "fresh-root: unknown argument '$1'" >&2; usage ;;
	esac
	shift
done
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, mount)"
command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel) || die "not inside a git checkout"
head=$(git -C "$repo" rev-parse HEAD)
git -C "$repo" diff --quiet HEAD || say "note: the working tree has changes; they are not in the clone (HEAD $head)"

if [ -n "$dir" ]; then
	[ ! -e "$dir" ] || [ -z "$(ls -A "$dir")" ] || die "$dir exists and is not empty"
	mkdir -p "$dir"
	root=$(cd "$dir" && pwd)
else
	root=$(mktemp -d /var/tmp/doccc-fresh.XXXXXX)
	chmod 755 "$root" # it becomes /, which every user must be able to enter
fi
if [ -n "$cache" ]; then
	mkdir -p "$cache/debs" "$cache/apt" "$cache/pip"
	cache=$(cd "$cache" && pwd)
fi
user=dev
home=/home/$user

# ---- cleanup: processes in the root, then its mounts, then the root -------------------
in_root() { # the ids of the processes whose root is the root
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && echo "${p#/proc/}"
	done
}
step_pid=""
cleanup() {
	rc=$?
	set +e
	# the step running (debootstrap, or chroot and what it started)
	if [ -n "$step_pid" ]; then
		kill -TERM -- -"$step_pid" 2>/dev/null
		wait "$step_pid" 2>/dev/null
	fi
	# the processes started in the root (an interrupted make and its children)
	for i in 1 2 3 4 5 6 7 8 9 10; do
		pids=$(in_root)
		[ -n "$pids" ] || break
		# shellcheck disable=SC2086
		kill -TERM $pids 2>/dev/null
		sleep 1
	done
	# every mount under the root, innermost (last mounted) first
	awk -v r="$root/" 'index($2, r) == 1 { print $2 }' /proc/self/mounts | tac |
		while read -r m; do
			umount "$m" 2>/dev/null || umount -l "$m" || echo "fresh-root: could not unmount $m" >&2
		done
	if awk -v r="$root/" 'index($2, r) == 1 { found = 1 } END { exit !found }' /proc/self/mounts; then
		echo "fresh-root: something is still mounted under $root; not removing it" >&2
		[ "$rc" = 0 ] && rc=1
	elif [ "$keep" = 1 ]; then
		say "kept the root: $root (chroot $root runuser -l $user)"
	else
		rm -rf --one-file-system "$root"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'echo "fresh-root: interrupted; stopping and cleaning up" >&2; exit 130' INT
trap 'echo "fresh-root: terminated; stopping and cleaning up" >&2; exit 143' TERM

# ---- timing -------------------------------------------------------------------
times=()
status=0
step() { # step NAME COMMAND...: run it (errexit on), time it, record it; status=1 if it failed
	local name=$1 t0 t rc
	shift
	[ $status = 0 ] || return 0
	say "== $name"
	t0=$(date +%s)
	# in the background and in a process group of its own (set -m), so that a
	# signal to this script is handled at once and cleanup can stop all of it
	set +e -m
	(set -e; "$@") </dev/null &
	step_pid=$!
	set +m
	wait $step_pid
	rc=$?
	step_pid=""
	set -e
	t=$(($(date +%s) - t0))
	[ $rc = 0 ] || status=1
	times+=("$(printf '%-28s %5d s  %s' "$name" "$t" "$([ $rc = 0 ] && echo ok || echo "FAILED ($rc)")")")
	say "== $name: $t s, $([ $rc = 0 ] && echo ok || echo "failed ($rc)")"
}
summary() {
	say "summary (root $root, HEAD $head):"
	printf '  %s\n' "${times[@]}"
}

# ---- 1. the root ----------------------------------------------------------------
bootstrap() {
	debootstrap --variant=minbase --include=make,sudo,python3,ca-certificates \
		${cache:+--cache-dir="$cache/debs"} bookworm "$root" "$mirror"
}

# ---- 2. what a new machine has: apt sources, a user, the network, a clone -----------
configure() {
	cat >"$root/etc/apt/sources.list" <<-EOF
	deb $mirror bookworm main
	deb $mirror bookworm-updates main
	deb http://deb.debian.org/debian-security bookworm-security main
	EOF
	cp /etc/resolv.conf "$root/etc/resolv.conf"
	cp /etc/hosts "$root/etc/hosts"
	# A site's own CAs (a TLS-intercepting proxy): trusted inside too, by pip as well.
	if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
		cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
		chroot "$root" update-ca-certificates >/dev/null
		printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' >"$root/etc/pip.conf"
		say "copied the local CA certificates of /usr/local/share/ca-certificates"
	fi
	chroot "$root" useradd -m -s /bin/bash "$user"
	echo "$user ALL=(ALL) NOPASSWD: ALL" >"$root/etc/sudoers.d/$user"
	chmod 440 "$root/etc/sudoers.d/$user"
	mount -t proc proc "$root/proc"
	mount -t sysfs sysfs "$root/sys"
	mount --bind /dev "$root/dev"
	mount --bind /dev/pts "$root/dev/pts"
	mount -t tmpfs tmpfs "$root/dev/shm"
	if [ -n "$cache" ]; then
		mount --bind "$cache/apt" "$root/var/cache/apt/archives"
		mkdir -p "$root$home/.cache/pip"
		mount --bind "$cache/pip" "$root$home/.cache/pip"
		chroot "$root" chown -R "$user:$user" "$home/.cache"
	fi
	git clone -q --no-local "$repo" "$root$home/doccc"
	git -C "$root$home/doccc" checkout -q "$head"
	chroot "$root" chown -R "$user:$user" "$home/doccc"
}

# ---- 3. the targets, as the user, each once -------------------------------------------
as_user() { chroot "$root" /usr/sbin/runuser -l "$user" -c "$1"; }

step "debootstrap bookworm" bootstrap
step "configure, clone HEAD" configure
for t in $targets; do
	step "make $t" as_user "cd ~/doccc && make $t"
done
summary
exit $status
