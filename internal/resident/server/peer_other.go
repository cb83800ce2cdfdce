//go:build !linux

package server

import (
	"net"

	"quire/internal/resident"
)

func peerUID(*net.UnixConn) (int, error) { return -1, resident.ErrLinuxOnly }
