sh -c 'echo $HOME'
