# shellcheck shell=sh
# /etc/profile.d/fairsem-jobserver.sh (package fairsem): every make of a
# login shell of a member of group jobserver joins the machine's jobserver,
# /run/fairsem/jobserver, by name: MAKEFLAGS=--jobserver-auth=fifo:PATH,
# which make 4.4 and later, ninja 1.13 and cargo understand.  Only where
# the make on PATH is 4.4 or newer, MAKEFLAGS is unset and the name may be
# read and written: make 4.3 (Debian 12) cannot open a jobserver by name,
# and would run every build with -j1; there, run builds as
#   fairsem jobserver --name jobserver -- make
# which hands make 4.3 the name's two handles (--jobserver-auth=R,W).
fairsem_js=/run/fairsem/jobserver
if [ -z "${MAKEFLAGS-}" ] && [ -r "$fairsem_js" ] && [ -w "$fairsem_js" ] &&
	command -v make >/dev/null 2>&1; then
	fairsem_v=$(LC_ALL=C make --version 2>/dev/null |
		sed -n '1s/^GNU Make \([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p')
	case $fairsem_v in
	"4 "[4-9] | "4 "[1-9][0-9]* | [5-9]" "* | [1-9][0-9]*" "*)
		MAKEFLAGS="--jobserver-auth=fifo:$fairsem_js"
		export MAKEFLAGS
		;;
	esac
fi
unset fairsem_js fairsem_v
