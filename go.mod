module github.com/usid/usid

go 1.26
