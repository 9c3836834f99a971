//go:build linux

package cmd

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// checkPeer refuses a connection to the admin socket from any user other than the
// server's own or root. The socket's 0600 mode already says so; the kernel's record of
// who connected (SO_PEERCRED) still holds if the folder's or the socket's mode is ever
// looser than it should be.
func checkPeer(conn net.Conn) error {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if credErr != nil {
		return credErr
	}
	if !peerAllowed(cred.Uid, uint32(os.Getuid())) {
		return fmt.Errorf("user %d may not use this server's admin socket", cred.Uid)
	}
	return nil
}
